import Foundation
import NestedCloudKitCodable

extension InMemoryCloudDatabase {
    /// Accepts a share as the signed-in user, from the short GUID of its URL (`CloudShare/shortGUID`), as
    /// CloudKit Web Services' `records/accept` does: an invited participant becomes accepted; anyone else joins a
    /// public share as a public user with its public permission. The share's new version is in its owner's
    /// database, with the owner's change history, and what it covers appears in the user's shared database
    /// (``sharedDatabase(of:)``).
    ///
    /// - Returns: The share as it is once accepted, in the owner's zone as the user's shared database names it.
    /// - Throws: `CloudDatabaseError/invalidArguments(_:)` for a short GUID no share has (a forged or mistyped
    ///   URL) and for the owner accepting their own share; `CloudDatabaseError/permissionFailure(_:)` for a user
    ///   a private share doesn't list.
    public func acceptShare(shortGUID: String) async throws -> CloudShare {
        try await acceptShare(shortGUID: shortGUID, as: .signedIn)
    }

    /// Accepts a share as the caller's user; the share comes back as they name it, in the owner's zone.
    func acceptShare(shortGUID: String, as caller: Caller) async throws -> CloudShare {
        let request = try await beginRequest(.modify, items: 1)
        let user = try user(of: caller)
        guard let (owner, stored) = share(withShortGUID: shortGUID), let contents = stored.shareContents else {
            throw SharedDatabaseRules.unknownShortGUID(shortGUID)
        }
        var accepted = stored
        accepted.shareContents = try ShareAccess.accepting(contents, by: user, shareID: stored.id)
        accepted.systemFields?.changeTag = nextChangeTag()
        accepted.systemFields?.modificationDate = CloudValue.normalizedDate(clock.now())
        users[owner]?.storage.apply(writing: [accepted], removing: [])
        users[owner]?.logRecordChanges(written: [accepted], removed: [])
        databasesChangedByOthers.insert(ChangedDatabase(userRecordName: owner, scope: .private))
        notifySubscribers(of: owner, scope: .private, ofChangesIn: [accepted.id.zoneID])
        refreshSharedDatabases(showingZones: [accepted.id.zoneID], ownedBy: owner)
        let shared = accepted.movingZones { $0.sharedName(ownedBy: owner) }
        return try respond(to: request, with: try CloudShare(record: shared))
    }

    /// What a share's URL tells the signed-in user before they accept it, from its short GUID, as Web Services'
    /// `records/resolve` and `CKFetchShareMetadataOperation` do.
    ///
    /// - Parameters:
    ///   - shortGUID: The last part of the share's URL.
    ///   - fetchingRootRecord: Whether to include the root record (for a hierarchy share).
    /// - Throws: `CloudDatabaseError/invalidArguments(_:)` for a short GUID no share has;
    ///   `CloudDatabaseError/permissionFailure(_:)` for a user a private share doesn't list.
    public func shareMetadata(shortGUID: String, fetchingRootRecord: Bool = false) async throws -> CloudShare.Metadata {
        try await shareMetadata(shortGUID: shortGUID, fetchingRootRecord: fetchingRootRecord, as: .signedIn)
    }

    func shareMetadata(shortGUID: String, fetchingRootRecord: Bool, as caller: Caller) async throws
        -> CloudShare.Metadata
    {
        let request = try await beginRequest(.fetch, items: 1)
        let user = try user(of: caller)
        guard let (owner, stored) = share(withShortGUID: shortGUID), let contents = stored.shareContents else {
            throw SharedDatabaseRules.unknownShortGUID(shortGUID)
        }
        let standing = try ShareAccess.standing(of: user, in: contents, shareID: stored.id)
        let shared = { (zone: CloudRecord.ZoneID) in zone.sharedName(ownedBy: owner) }
        let root = contents.rootRecordID.flatMap { fetchingRootRecord ? users[owner]?.storage.records[$0] : nil }
        let metadata = CloudShare.Metadata(
            share: try CloudShare(record: stored.movingZones(shared)),
            rootRecordID: contents.rootRecordID?.movingZone(shared), rootRecord: root?.movingZones(shared),
            ownerUserRecordName: owner, participantRole: standing.role, participantStatus: standing.status,
            participantPermission: standing.permission)
        return try respond(to: request, with: metadata)
    }

    /// Every share a user owns or takes part in (invited, accepted, removed), with its owner, by owner and name:
    /// what an admin view of a user's shares lists.
    package func shares(involving user: String) -> [(owner: String, record: CloudRecord)] {
        var found: [(owner: String, record: CloudRecord)] = []
        for owner in users.keys.sorted() {
            guard let records = users[owner]?.storage.records.values else { continue }
            for record in records where record.recordType == CloudShare.recordType {
                let involved =
                    owner == user || record.shareContents?.participants.contains { $0.userRecordName == user } == true
                if involved { found.append((owner, record)) }
            }
        }
        return found.sorted { ($0.owner, $0.record.id.recordName) < ($1.owner, $1.record.id.recordName) }
    }

    /// The share with this short GUID, and the user whose database holds it: what a server serving share URLs
    /// looks up.
    package func share(withShortGUID shortGUID: String) -> (owner: String, record: CloudRecord)? {
        // Sorted, so that the same state always finds the same share (short GUIDs are unique anyway).
        for owner in users.keys.sorted() {
            if let record = users[owner]?.storage.share(withShortGUID: shortGUID) { return (owner, record) }
        }
        return nil
    }
}
