#if canImport(CloudKit)
import CloudKit
import Foundation

// Saving shares through CloudKit's framework, and accepting them from a URL.

extension CloudKitDatabase {
    /// The `CKShare`s of the share records of a save: each written onto CloudKit's archive of the share (with the
    /// participants CloudKit last gave it), or made new from its root record, saved in the same request as CloudKit
    /// requires, or its zone; then its participants made the portable share's, asking the container for the users
    /// CloudKit doesn't list yet (a participant comes only from `CKContainer.shareParticipant(forUserRecordID:)` or
    /// `shareParticipant(forEmailAddress:)`). A share that can't be made gets a refusal instead.
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
            // CloudKit changes a share's participants only while its public permission is `none` (an Objective-C
            // exception otherwise): the participants first, then the permission. A share wanting both a public
            // permission and invited participants was refused before (`ShareRules`), as CloudKit refuses it.
            share.publicPermission = .none
            do {
                try await matchParticipants(of: share, to: contents.participants)
            } catch let error as CloudDatabaseError {
                refusals[record.id] = error
                continue
            }
            share.publicPermission = contents.publicPermission.ckPermission
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
                return try await accountContainer.shareParticipant(forEmailAddress: wanted.emailAddress ?? "")
            }
            participant.permission = wanted.permission.ckPermission
            share.addParticipant(participant)
        }
    }

    /// What a share's URL tells the signed-in user before they accept it, asked of ``container``: the share, its
    /// root's ID, its owner and the user's standing, and, with `fetchingRootRecord`, the root record itself (for a
    /// record share; a zone-wide share has none), as every backend's `shareMetadata` gives it.
    ///
    /// Without the root record this is `CKContainer.shareMetadata(for:)`; with it, a
    /// `CKFetchShareMetadataOperation` with `shouldFetchRootRecord`, which CloudKit's async call doesn't offer.
    public func shareMetadata(for url: URL, fetchingRootRecord: Bool = false) async throws -> CloudShare.Metadata {
        let metadata = try await ckShareMetadata(for: url, fetchingRootRecord: fetchingRootRecord)
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
        try await acceptShare(try await ckShareMetadata(for: url, fetchingRootRecord: false))
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
    private func ckShareMetadata(for url: URL, fetchingRootRecord: Bool) async throws -> CKShare.Metadata {
        do {
            guard fetchingRootRecord else { return try await accountContainer.shareMetadata(for: url) }
            return try await fetchShareMetadataWithRootRecord(for: url)
        } catch let error as CKError where error.code == .unknownItem {
            throw CloudDatabaseError.invalidArguments(
                "no share is at \(url): check the URL, or ask the share's owner to send it again")
        } catch {
            throw Self.requestError(error, zoneID: nil, items: 1)
        }
    }

    /// The metadata with the root record, through a `CKFetchShareMetadataOperation` on ``container``: its one
    /// URL's result, once the operation has finished (CloudKit runs the operation's closures one after another,
    /// the per-URL one first).
    private func fetchShareMetadataWithRootRecord(for url: URL) async throws -> CKShare.Metadata {
        let operation = CKFetchShareMetadataOperation(shareURLs: [url])
        operation.shouldFetchRootRecord = true
        let found = Locked<Result<CKShare.Metadata, any Error>?>(nil)
        return try await withCheckedThrowingContinuation { continuation in
            operation.perShareMetadataResultBlock = { _, result in found.withLock { $0 = result } }
            operation.fetchShareMetadataResultBlock = { result in
                if case .failure(let error) = result { return continuation.resume(throwing: error) }
                continuation.resume(with: found.withLock { $0 } ?? .failure(CKError(.unknownItem)))
            }
            accountContainer.add(operation)
        }
    }
}
#endif
