import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

// The sharing requests of a server of several users: accepting a share, what a share's URL tells, and the writes
// a user makes in their shared database, which go to the owners' databases under the shares' permissions.

extension CloudServer {
    // MARK: Shares by URL

    /// Accepts a share as `user`, from the short GUID of its URL (`CloudShare.shortGUID`), as CloudKit Web
    /// Services' `records/accept` does: an invited participant becomes accepted; anyone else joins a public share
    /// as a public user with its public permission. The share's new version is in its owner's database, and what
    /// it covers appears in the user's shared database.
    ///
    /// - Returns: The share as it is once accepted, in the owner's zone as the user's shared database names it.
    /// - Throws: `CloudDatabaseError.invalidArguments(_:)` for a short GUID no share has (a forged or mistyped
    ///   URL) and for the owner accepting their own share; `CloudDatabaseError.permissionFailure(_:)` for a user
    ///   a private share doesn't list.
    package func acceptShare(shortGUID: String, as user: @escaping @Sendable () async throws -> String) async throws
        -> CloudShare
    {
        try await request(.modify, items: 1) { try await accept(shortGUID: shortGUID, as: try await user()) }
    }

    private func accept(shortGUID: String, as user: String) async throws -> CloudShare {
        guard let (owner, found) = try await share(withShortGUID: shortGUID) else {
            throw SharedDatabaseRules.unknownShortGUID(shortGUID)
        }
        let accepted = try await engine.write(.privateDatabase(of: owner)) { stored in
            // Read again in the transaction that writes it: the owner may have changed it since.
            guard let share = try stored.record(withID: found.id), let contents = share.shareContents,
                contents.shortGUID == shortGUID
            else { throw SharedDatabaseRules.unknownShortGUID(shortGUID) }
            var accepted = share
            accepted.shareContents = try ShareAccess.accepting(contents, by: user, shareID: share.id)
            accepted.systemFields?.changeTag = stored.changeTags.next()
            accepted.systemFields?.modificationDate = CloudValue.normalizedDate(stored.now)
            try stored.write([accepted], removing: [], contents: [:], asCopy: false)
            return accepted
        }
        let zone = accepted.id.zoneID
        await didChange(ownedBy: owner, OwnerChange(zones: [zone], shared: [zone: .everything]), madeBy: user)
        return try CloudShare(record: accepted.movingZones { $0.sharedName(ownedBy: owner) })
    }

    /// What a share's URL tells `user` before they accept it, from its short GUID, as Web Services'
    /// `records/resolve` and `CKFetchShareMetadataOperation` do.
    ///
    /// - Parameters:
    ///   - shortGUID: The last part of the share's URL.
    ///   - fetchingRootRecord: Whether to include the root record (for a hierarchy share).
    ///   - user: Who asks, found once the request is admitted.
    /// - Throws: `CloudDatabaseError.invalidArguments(_:)` for a short GUID no share has;
    ///   `CloudDatabaseError.permissionFailure(_:)` for a user a private share doesn't list.
    package func shareMetadata(
        shortGUID: String, fetchingRootRecord: Bool, as user: @escaping @Sendable () async throws -> String
    ) async throws -> CloudShare.Metadata {
        try await request(.fetch, items: 1) {
            try await metadata(shortGUID: shortGUID, fetchingRootRecord: fetchingRootRecord, as: try await user())
        }
    }

    private func metadata(shortGUID: String, fetchingRootRecord: Bool, as user: String) async throws
        -> CloudShare.Metadata
    {
        guard let (owner, stored) = try await share(withShortGUID: shortGUID), let contents = stored.shareContents
        else { throw SharedDatabaseRules.unknownShortGUID(shortGUID) }
        let standing = try ShareAccess.standing(of: user, in: contents, shareID: stored.id)
        let shared = { (zone: CloudRecord.ZoneID) in zone.sharedName(ownedBy: owner) }
        var root: CloudRecord?
        if fetchingRootRecord, let rootID = contents.rootRecordID {
            root = try await engine.read(.privateDatabase(of: owner)) { owners in
                try owners.record(withID: rootID).map(owners.withAssetFiles)
            }
        }
        return CloudShare.Metadata(
            share: try CloudShare(record: stored.movingZones(shared)),
            rootRecordID: contents.rootRecordID?.movingZone(shared), rootRecord: root?.movingZones(shared),
            ownerUserRecordName: owner, participantRole: standing.role, participantStatus: standing.status,
            participantPermission: standing.permission)
    }

    /// The share with this short GUID, and the user whose database holds it: what a server serving share URLs
    /// looks up.
    package func share(withShortGUID shortGUID: String) async throws -> (owner: String, record: CloudRecord)? {
        for owner in try engine.users(.private) {
            let found = try await engine.read(.privateDatabase(of: owner)) { try $0.share(withShortGUID: shortGUID) }
            if let found { return (owner, found) }
        }
        return nil
    }

    /// Every share a user owns or takes part in (invited, accepted, removed), with its owner, by owner, zone and
    /// name: what an admin view of a user's shares lists.
    package func shares(involving user: String) async throws -> [(owner: String, record: CloudRecord)] {
        var found: [(owner: String, record: CloudRecord)] = []
        for owner in try engine.users(.private) {
            let shares = try await engine.read(.privateDatabase(of: owner)) { try $0.allShares() }
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

    /// Applies a modify request made in `user`'s shared database: each owner's part goes to the owner's database
    /// under the rules, checked and written in one transaction, once the shares the user accepted allow each item.
    func modifySharedRecords(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError],
        contents: [AssetKey: Data], as user: String
    ) async throws -> CloudModifyResults {
        let shownZones = Set(try await read(.sharedDatabase(of: user)) { try $0.zones() })
        var saveResults: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ID: Result<Void, CloudDatabaseError>] = [:]
        let byOwner = Dictionary(grouping: operations) { $0.id.zoneID.ownerName }
        for (owner, operations) in byOwner.sorted(by: { $0.key < $1.key }) {
            // An owner none of whose zones the user sees gets no database made, whatever name the request makes up.
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
            let ownersContents = Dictionary(
                contents.filter { $0.key.recordID.zoneID.ownerName == owner }
                    .map { ($0.key.movingZone { $0.ownersName(ownedBy: owner) }, $0.value) },
                uniquingKeysWith: { first, _ in first })
            let tracking = options.contains(.sharedDatabases)
            let (results, change) = try await engine.write(.privateDatabase(of: owner)) { stored in
                let request = try SharedDatabaseRules.OwnerRequest(
                    operations, by: user, to: owner, failing: failures, shownZones: shownZones, store: stored,
                    shares: { try stored.shares(in: $0) })
                var change = OwnerChange()
                let results = try Self.apply(
                    request.operations, atomically: atomically, failing: request.refusals, contents: ownersContents,
                    madeBy: user, to: &stored, tracking: tracking, into: &change)
                try Self.leave(request.sharesLeft, as: user, in: &stored, tracking: tracking, into: &change)
                return (request.sharedResults(results, ownedBy: owner), change)
            }
            saveResults.merge(results.saveResults) { first, _ in first }
            deleteResults.merge(results.deleteResults) { first, _ in first }
            await didChange(ownedBy: owner, change, madeBy: user)
        }
        return (saveResults, deleteResults)
    }

    /// Takes `user` out of these shares (by the owner's IDs), each a new version in the owner's database.
    private static func leave(
        _ shareIDs: [CloudRecord.ID], as user: String, in stored: inout Engine.Transaction, tracking: Bool,
        into change: inout OwnerChange
    ) throws {
        var written: [CloudRecord] = []
        for id in shareIDs {
            guard var share = try stored.record(withID: id), let contents = share.shareContents else { continue }
            share.shareContents = ShareAccess.leaving(contents, by: user)
            share.systemFields?.changeTag = stored.changeTags.next()
            share.systemFields?.modificationDate = CloudValue.normalizedDate(stored.now)
            share.systemFields?.lastModifiedUserRecordName = user
            written.append(share)
        }
        try write(written, removing: [], contents: [:], to: &stored, tracking: tracking, into: &change)
    }

    // MARK: Zones of the shared database

    /// Zones in `user`'s shared database: none can be created there, and deleting one leaves every share of it
    /// the user accepted, as in CloudKit.
    func modifySharedZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID], as user: String
    ) async throws -> CloudZoneModifyResults {
        var saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        for zone in zonesToSave {
            saveResults[zone] = .failure(SharedDatabaseRules.zoneCreationRefusal(zone, by: user))
        }
        let shownZones = Set(try await read(.sharedDatabase(of: user)) { try $0.zones() })
        let tracking = options.contains(.sharedDatabases)
        for zone in zonesToDelete {
            guard shownZones.contains(zone) else {
                deleteResults[zone] = .failure(.zoneNotFound(zone))
                continue
            }
            let owner = zone.ownerName
            let ownersZone = zone.ownersName(ownedBy: owner)
            var change = try await engine.write(.privateDatabase(of: owner)) { stored in
                // Only the shares the user joined: an invitation they haven't accepted stays open.
                let joined = try stored.shares(in: ownersZone).filter { SharedDatabaseRules.hasAccepted($0, user) }
                var change = OwnerChange()
                try Self.leave(joined.map(\.id), as: user, in: &stored, tracking: tracking, into: &change)
                return change
            }
            change.shared[ownersZone] = .everything
            await didChange(ownedBy: owner, change, madeBy: user)
            deleteResults[zone] = .success(())
        }
        return (saveResults, deleteResults)
    }
}
