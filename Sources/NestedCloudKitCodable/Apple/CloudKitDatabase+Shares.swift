#if canImport(CloudKit)
import CloudKit
import Foundation

// Saving shares through CloudKit's framework, and accepting them from a URL.

extension CloudKitDatabase {
    /// The `CKShare`s of the share records of a save: each written onto CloudKit's archive of the share (with the
    /// participants CloudKit last gave it), or made new from its root record, saved in the same request as CloudKit
    /// requires, or its zone; then its participants made the portable share's, asking the container for the users
    /// CloudKit doesn't list yet (a participant comes only from `CKContainer.shareParticipant(forUserRecordID:)` or
    /// `shareParticipants(forEmailAddresses:)`). A share that can't be made gets a refusal instead.
    func ckShares(
        _ shares: [CloudRecord], bases: [CloudRecord.ID: CKRecord?], roots: [CloudRecord.ID: CKRecord],
        assetFiles: TemporaryAssetFiles, refusals: inout [CloudRecord.ID: CloudDatabaseError]
    ) async throws -> [CKRecord] {
        var made: [CKRecord] = []
        for record in shares {
            guard let contents = record.shareContents else {
                refusals[record.id] = .invalidArguments(
                    "\(record.id) is a \(CloudShare.recordType) record without a share's state: make it with CloudShare"
                )
                continue
            }
            let share: CKShare
            if let base = bases[record.id] ?? nil {
                guard let restored = base as? CKShare else {
                    refusals[record.id] = .invalidArguments("\(record.id)'s archived system fields aren't a share's")
                    continue
                }
                share = restored
            } else if let rootID = contents.rootRecordID {
                guard let root = roots[rootID] else {
                    refusals[record.id] = .invalidArguments(
                        "a new share of \(rootID) must be saved with its root record, in the same request, as CloudKit "
                            + "requires: save both")
                    continue
                }
                share = CKShare(rootRecord: root, shareID: record.id.ckRecordID)
            } else {
                share = CKShare(recordZoneID: record.id.zoneID.ckZoneID)
            }
            do {
                _ = try record.ckRecord(onto: share, assetFiles: assetFiles)
            } catch {
                refusals[record.id] = .invalidArguments(error.description)
                continue
            }
            share.publicPermission = contents.publicPermission.ckPermission
            do {
                try await matchParticipants(of: share, to: contents.participants)
            } catch let error as CloudDatabaseError {
                refusals[record.id] = error
                continue
            }
            made.append(share)
        }
        return made
    }

    /// Makes a `CKShare`'s invited participants the portable share's: permissions changed, the missing ones asked
    /// of the container and added, the others removed. The owner and public users are the server's.
    private func matchParticipants(of share: CKShare, to participants: [CloudShare.Participant]) async throws {
        let invited = participants.filter { $0.role == .privateUser && $0.hasIdentity }
        for existing in share.participants where existing.role == .privateUser {
            if let wanted = invited.first(where: { $0.isSame(as: existing) }) {
                existing.permission = wanted.permission.ckPermission
            } else if CloudShare.Participant(existing).hasIdentity {
                share.removeParticipant(existing)
            }
            // A participant the portable model can't name (invited by phone number) stays as CloudKit has them.
        }
        for wanted in invited where !share.participants.contains(where: { wanted.isSame(as: $0) }) {
            let participant = try await request(zoneID: CloudRecord.ID(share.recordID).zoneID, items: 1) {
                if let name = wanted.userRecordName {
                    return try await accountContainer.shareParticipant(
                        forUserRecordID: CKRecord.ID(recordName: name))
                }
                // CloudKit's async call by email address takes a list: one address, one result.
                let email = wanted.emailAddress ?? ""
                let found = try await accountContainer.shareParticipants(forEmailAddresses: [email])
                guard let result = found[email] else { throw CKError(.unknownItem) }
                return try result.get()
            }
            participant.permission = wanted.permission.ckPermission
            share.addParticipant(participant)
        }
    }

    /// What a share's URL tells the signed-in user before they accept it, through `CKContainer.shareMetadata(for:)`
    /// of ``container``: the share, its root's ID (CloudKit's async call doesn't fetch the root record itself, so
    /// ``CloudShare/Metadata/rootRecord`` is `nil`), its owner and the user's standing.
    public func shareMetadata(for url: URL) async throws -> CloudShare.Metadata {
        let metadata = try await ckShareMetadata(for: url)
        do {
            return try CloudShare.Metadata(metadata)
        } catch {
            throw CloudDatabaseError.internalError("CloudKit's metadata of the share at \(url) can't be read: \(error)")
        }
    }

    /// Accepts the share at a URL as the signed-in user: its metadata, then `CKContainer.accept(_:)`. What it
    /// shares then shows in the user's shared database (`container.sharedCloudDatabase`).
    @discardableResult
    public func acceptShare(at url: URL) async throws -> CloudShare {
        try await acceptShare(try await ckShareMetadata(for: url))
    }

    /// Accepts a share from the metadata CloudKit handed the app (the scene delegate's
    /// `windowScene(_:userDidAcceptCloudKitShareWith:)`, the app delegate's `userDidAcceptCloudKitShareWith`).
    @discardableResult
    public func acceptShare(_ metadata: CKShare.Metadata) async throws -> CloudShare {
        let share = try await request(zoneID: CloudRecord.ID(metadata.share.recordID).zoneID, items: 1) {
            try await accountContainer.accept(metadata)
        }
        do {
            return try CloudShare(share)
        } catch {
            throw CloudDatabaseError.internalError("CloudKit's accepted share can't be read: \(error)")
        }
    }

    /// The metadata of the share at a URL; a URL no share has is ``CloudDatabaseError/invalidArguments(_:)``, as
    /// a forged short GUID is on every backend.
    private func ckShareMetadata(for url: URL) async throws -> CKShare.Metadata {
        do {
            return try await accountContainer.shareMetadata(for: url)
        } catch let error as CKError where error.code == .unknownItem {
            throw CloudDatabaseError.invalidArguments(
                "no share is at \(url): check the URL, or ask the share's owner to send it again")
        } catch {
            throw Self.requestError(error, zoneID: nil, items: 1)
        }
    }
}
#endif
