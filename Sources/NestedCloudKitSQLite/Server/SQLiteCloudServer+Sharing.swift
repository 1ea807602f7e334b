import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer

extension SQLiteCloudServer {
    // MARK: Accepting shares

    /// Accepts a share as `user`, from the short GUID of its URL (`CloudShare.shortGUID`), as CloudKit Web
    /// Services' `records/accept` does: an invited participant becomes accepted; anyone else joins a public share
    /// as a public user with its public permission. The share's new version is in its owner's database, and what
    /// it covers appears in the user's shared database.
    ///
    /// - Returns: The share as it is once accepted, in the owner's zone as the user's shared database names it.
    /// - Throws: `CloudDatabaseError.invalidArguments(_:)` for a short GUID no share has (a forged or mistyped
    ///   URL) and for the owner accepting their own share; `CloudDatabaseError.permissionFailure(_:)` for a user
    ///   a private share doesn't list.
    public func acceptShare(shortGUID: String, as user: String) async throws -> CloudShare {
        guard let (owner, found) = try share(withShortGUID: shortGUID) else {
            throw SharedDatabaseRules.unknownShortGUID(shortGUID)
        }
        let accepted = try await files.file(of: owner, .private).modify { _, transaction in
            // Read again in the transaction that writes it: the owner may have changed it since.
            guard let stored = try transaction.store.record(withID: found.id), let contents = stored.shareContents,
                contents.shortGUID == shortGUID
            else { throw SharedDatabaseRules.unknownShortGUID(shortGUID) }
            var accepted = stored
            accepted.shareContents = try ShareAccess.accepting(contents, by: user, shareID: stored.id)
            accepted.systemFields?.changeTag = transaction.nextChangeTag()
            accepted.systemFields?.modificationDate = CloudValue.normalizedDate(transaction.now)
            try transaction.write([accepted], removed: [], contents: [:])
            return accepted
        }
        copies.noteChangedByOthers(.init(userRecordName: owner, scope: .private))
        refreshSharedDatabases(showing: [accepted.id.zoneID], ownedBy: owner)
        return try CloudShare(record: accepted.movingZones { $0.sharedName(ownedBy: owner) })
    }

    /// What a share's URL tells `user` before they accept it, from its short GUID, as Web Services'
    /// `records/resolve` and `CKFetchShareMetadataOperation` do.
    ///
    /// - Parameters:
    ///   - shortGUID: The last part of the share's URL.
    ///   - fetchingRootRecord: Whether to include the root record (for a hierarchy share).
    ///   - user: Who asks.
    /// - Throws: `CloudDatabaseError.invalidArguments(_:)` for a short GUID no share has;
    ///   `CloudDatabaseError.permissionFailure(_:)` for a user a private share doesn't list.
    public func shareMetadata(shortGUID: String, fetchingRootRecord: Bool = false, as user: String) async throws
        -> CloudShare.Metadata
    {
        guard let (owner, stored) = try share(withShortGUID: shortGUID), let contents = stored.shareContents else {
            throw SharedDatabaseRules.unknownShortGUID(shortGUID)
        }
        let standing = try ShareAccess.standing(of: user, in: contents, shareID: stored.id)
        let shared = { (zone: CloudRecord.ZoneID) in zone.sharedName(ownedBy: owner) }
        var root: CloudRecord?
        if fetchingRootRecord, let rootID = contents.rootRecordID {
            root = try await files.file(of: owner, .private).records(for: [rootID], desiredKeys: nil)[rootID]?.get()
        }
        return CloudShare.Metadata(
            share: try CloudShare(record: stored.movingZones(shared)),
            rootRecordID: contents.rootRecordID?.movingZone(shared), rootRecord: root?.movingZones(shared),
            ownerUserRecordName: owner, participantRole: standing.role, participantStatus: standing.status,
            participantPermission: standing.permission)
    }

    /// The share with this short GUID, and the user whose database holds it: what a server serving share URLs
    /// looks up.
    package func share(withShortGUID shortGUID: String) throws -> (owner: String, record: CloudRecord)? {
        for owner in files.users(.private) {
            let file = try files.file(of: owner, .private)
            let found = try file.readNow { database in
                try SQLiteRecordStore(database: database, assets: file.assets).allShares()
                    .first { $0.shareContents?.shortGUID == shortGUID }
            }
            if let found { return (owner, found) }
        }
        return nil
    }

    /// Every share a user owns or takes part in (invited, accepted, removed), with its owner, by owner and name:
    /// what an admin view of a user's shares lists.
    package func shares(involving user: String) throws -> [(owner: String, record: CloudRecord)] {
        var found: [(owner: String, record: CloudRecord)] = []
        for owner in files.users(.private) {
            let file = try files.file(of: owner, .private)
            let shares = try file.readNow { database in
                try SQLiteRecordStore(database: database, assets: file.assets).allShares()
            }
            for share in shares
            where owner == user
                || share.shareContents?.participants.contains(where: { $0.userRecordName == user }) == true
            {
                found.append((owner, share))
            }
        }
        return found
    }

    // MARK: Writing to the shared database

    /// Applies a modify request made in `user`'s shared database: each owner's part goes to the owner's file under
    /// the rules, checked and written in one transaction, once the shares the user accepted allow each item.
    func modifySharedRecords(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError],
        as user: String
    ) async throws -> CloudModifyResults {
        guard operations.count <= maximumItemsPerRequest else {
            throw CloudDatabaseError.limitExceeded(limit: maximumItemsPerRequest, requested: operations.count)
        }
        let shownZones = Set(try await files.file(of: user, .shared).allRecordZones())
        // Asset files are read before any transaction, as the user names the records.
        let files = AssetFileContents(readingFilesOf: operations.compactMap(\.recordToSave))
        let failures = files.failures.merging(failures) { fileFailure, _ in fileFailure }
        var saveResults: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ID: Result<Void, CloudDatabaseError>] = [:]
        let byOwner = Dictionary(grouping: operations) { $0.id.zoneID.ownerName }
        for (owner, operations) in byOwner.sorted(by: { $0.key < $1.key }) {
            // An owner none of whose zones the user sees gets no file opened, whatever name the request makes up.
            guard owner != user, operations.contains(where: { shownZones.contains($0.id.zoneID) }) else {
                for operation in operations {
                    let failure = failures[operation.id] ?? .zoneNotFound(operation.id.zoneID)
                    if operation.recordToSave != nil {
                        saveResults[operation.id] = .failure(failure)
                    } else {
                        deleteResults[operation.id] = .failure(failure)
                    }
                }
                continue
            }
            let contents = Dictionary(
                files.contents.filter { $0.key.recordID.zoneID.ownerName == owner }
                    .map { ($0.key.movingZone { $0.ownersName(ownedBy: owner) }, $0.value) },
                uniquingKeysWith: { first, _ in first })
            let (results, zoneChanges) = try await self.files.file(of: owner, .private).modify(
                trackingZoneChanges: true
            ) { _, transaction in
                let request = try SharedDatabaseRules.OwnerRequest(
                    operations, by: user, to: owner, failing: failures, shownZones: shownZones,
                    store: transaction.store, shares: { try transaction.store.shares(in: $0) })
                let results = try transaction.apply(
                    request.operations, atomically: atomically, failing: request.refusals, contents: contents,
                    madeBy: user)
                try Self.leaving(request.sharesLeft, as: user, in: &transaction)
                return (request.sharedResults(results, ownedBy: owner), transaction.zoneChanges)
            }
            saveResults.merge(results.saveResults) { first, _ in first }
            deleteResults.merge(results.deleteResults) { first, _ in first }
            if !zoneChanges.isEmpty { copies.noteChangedByOthers(.init(userRecordName: owner, scope: .private)) }
            refreshSharedDatabases(after: zoneChanges, ownedBy: owner)
        }
        return (saveResults, deleteResults)
    }

    /// Takes `user` out of these shares (by the owner's IDs), each a new version in the owner's file; returns
    /// their zones.
    @discardableResult
    private static func leaving(
        _ shareIDs: [CloudRecord.ID], as user: String, in transaction: inout ModifyTransaction
    ) throws -> Set<CloudRecord.ZoneID> {
        var written: [CloudRecord] = []
        for id in shareIDs {
            guard var share = try transaction.store.record(withID: id), let contents = share.shareContents else {
                continue
            }
            share.shareContents = ShareAccess.leaving(contents, by: user)
            share.systemFields?.changeTag = transaction.nextChangeTag()
            share.systemFields?.modificationDate = CloudValue.normalizedDate(transaction.now)
            share.systemFields?.lastModifiedUserRecordName = user
            written.append(share)
        }
        try transaction.write(written, removed: [], contents: [:])
        return Set(written.map(\.id.zoneID))
    }

    // MARK: Zones of the shared database

    /// Zones in `user`'s shared database: none can be created there, and deleting one leaves every share of it
    /// the user accepted, as in CloudKit.
    func modifySharedZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID], as user: String
    ) async throws -> CloudZoneModifyResults {
        guard zonesToSave.count + zonesToDelete.count <= maximumItemsPerRequest else {
            throw CloudDatabaseError.limitExceeded(
                limit: maximumItemsPerRequest, requested: zonesToSave.count + zonesToDelete.count)
        }
        var saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        for zone in zonesToSave {
            saveResults[zone] = .failure(SharedDatabaseRules.zoneCreationRefusal(zone, by: user))
        }
        let shownZones = Set(try await files.file(of: user, .shared).allRecordZones())
        for zone in zonesToDelete {
            guard shownZones.contains(zone) else {
                deleteResults[zone] = .failure(.zoneNotFound(zone))
                continue
            }
            let owner = zone.ownerName
            let ownersZone = zone.ownersName(ownedBy: owner)
            let left = try await files.file(of: owner, .private).modify { _, transaction in
                // Only the shares the user joined: an invitation they haven't accepted stays open.
                let joined = try transaction.store.shares(in: ownersZone)
                    .filter { SharedDatabaseRules.hasAccepted($0, user) }
                return try Self.leaving(joined.map(\.id), as: user, in: &transaction)
            }
            if !left.isEmpty { copies.noteChangedByOthers(.init(userRecordName: owner, scope: .private)) }
            refreshSharedDatabases(showing: left.union([ownersZone]), ownedBy: owner)
            deleteResults[zone] = .success(())
        }
        return (saveResults, deleteResults)
    }
}
