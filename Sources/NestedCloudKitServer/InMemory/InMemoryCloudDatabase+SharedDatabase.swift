import Foundation
import NestedCloudKitCodable

// Each user's shared database: what others share with them, as CloudKit's shared database shows it.
//
// The records stay in their owner's private database, the one copy every write goes to. Each user's shared
// database keeps a copy of what the shares they accepted cover, under the owner's zone names, with change logs of
// its own. The copy is brought up to date after every change to a shared zone, whoever makes it: so a record that a
// share stops covering (the user removed, the share deleted, the record moved out of the hierarchy) is a deletion
// in the user's zone changes, and a zone they no longer see any record of is a deletion in their database changes,
// as CloudKit reports losing access.

extension InMemoryCloudDatabase {
    // MARK: Keeping shared databases up to date

    /// Brings up to date, whole, the shared database of every user who may see one of these zones of `owner`:
    /// after zones made or deleted, shares accepted or left.
    func refreshSharedDatabases(showingZones zones: [CloudRecord.ZoneID], ownedBy owner: String) {
        refreshSharedDatabases(
            after: Dictionary(zones.map { ($0, SharedZoneChange.everything) }, uniquingKeysWith: { $1 }),
            ownedBy: owner)
    }

    /// Brings up to date the shared database of every user who may see a zone of `owner` that a write changed,
    /// through the one refresh every server runs (`SharedCopies`): by the records the write touched when it can't
    /// change who sees the others, whole otherwise.
    func refreshSharedDatabases(after changes: [CloudRecord.ZoneID: SharedZoneChange], ownedBy owner: String) {
        var due: [SharedCopies.OwnedZone: SharedZoneChange] = [:]
        for (zone, change) in changes where zone != .default {
            due[SharedCopies.OwnedZone(owner: owner, zone: zone)] = change
        }
        guard !due.isEmpty else { return }
        var storage = InMemoryCopyStorage(owners: users, viewers: sharedDatabases, nextGeneration: nextGeneration)
        // Taken out while they change, so that the actor's copy doesn't make a change copy every database.
        sharedDatabases = [:]
        let outcome = sharedCopies.refresh(due, in: &storage)
        sharedDatabases = storage.viewers
        nextGeneration = storage.nextGeneration
        for (viewer, zone) in outcome.changed {
            databasesChangedByOthers.insert(ChangedDatabase(userRecordName: viewer, scope: .shared))
            notifySubscribers(of: viewer, scope: .shared, ofChangesIn: [zone])
        }
    }

    // MARK: Writing to the shared database

    /// Applies a modify request made in `user`'s shared database: each owner's part goes to the owner's database
    /// under the rules, as the owner's own request would, once the shares the user accepted allow each item.
    ///
    /// A record is written only with read-write permission on it and on its new version (a new record is covered
    /// through its parent); a share is changed only by its owner, and deleting one leaves it.
    func modifySharedRecords(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError],
        as user: String
    ) throws -> CloudModifyResults {
        var saveResults: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ID: Result<Void, CloudDatabaseError>] = [:]
        let shownZones = sharedDatabases[user]?.storage.zones ?? []
        let byOwner = Dictionary(grouping: operations) { $0.id.zoneID.ownerName }
        for (owner, operations) in byOwner.sorted(by: { $0.key < $1.key }) {
            let request: SharedDatabaseRules.OwnerRequest
            do {
                // In a scope of its own: a copy of the store still alive when it is changed below would copy it whole.
                let storage = users[owner]?.storage ?? InMemoryRecordStore()
                request = try SharedDatabaseRules.OwnerRequest(
                    operations, by: user, to: owner, failing: failures, shownZones: shownZones, store: storage,
                    shares: { storage.shares(in: $0) })
            }
            let results = try applyModification(
                request.operations, atomically: atomically, failing: request.refusals, toZonesOf: owner, madeBy: user)
            let shared = request.sharedResults(results, ownedBy: owner)
            saveResults.merge(shared.saveResults) { first, _ in first }
            deleteResults.merge(shared.deleteResults) { first, _ in first }
            leaveShares(request.sharesLeft, ownedBy: owner, as: user)
        }
        return (saveResults, deleteResults)
    }

    /// Takes `user` out of these shares of `owner` (by the owner's IDs), each a new version in the owner's
    /// database.
    private func leaveShares(_ shareIDs: [CloudRecord.ID], ownedBy owner: String, as user: String) {
        var written: [CloudRecord] = []
        for id in shareIDs {
            guard var share = users[owner]?.storage.records[id], let contents = share.shareContents else { continue }
            share.shareContents = ShareAccess.leaving(contents, by: user)
            share.systemFields?.changeTag = nextChangeTag()
            share.systemFields?.modificationDate = CloudValue.normalizedDate(clock.now())
            share.systemFields?.lastModifiedUserRecordName = user
            written.append(share)
        }
        guard !written.isEmpty else { return }
        users[owner]?.storage.apply(writing: written, removing: [])
        users[owner]?.logRecordChanges(written: written, removed: [])
        databasesChangedByOthers.insert(ChangedDatabase(userRecordName: owner, scope: .private))
        let zones = written.map(\.id.zoneID)
        notifySubscribers(of: owner, scope: .private, ofChangesIn: zones)
        refreshSharedDatabases(showingZones: zones, ownedBy: owner)
    }

    /// The databases other users' requests changed since the last call: an owner's private database a
    /// participant wrote to or accepted a share of, a user's shared database that an owner's change (or their own
    /// share being accepted or left) changed. For a server that sends pushes of its own.
    package func takeDatabasesChangedByOthers() -> Set<ChangedDatabase> {
        defer { databasesChangedByOthers = [] }
        return databasesChangedByOthers
    }

    /// A user's private or shared database.
    package typealias ChangedDatabase = SharedDatabaseRules.ChangedDatabase

    // MARK: Zones of the shared database

    /// Zones in `user`'s shared database: none can be created there, and deleting one leaves every share of it
    /// the user accepted, as in CloudKit.
    func modifySharedZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID], as user: String
    ) -> CloudZoneModifyResults {
        var saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        for zone in zonesToSave {
            saveResults[zone] = .failure(SharedDatabaseRules.zoneCreationRefusal(zone, by: user))
        }
        for zone in zonesToDelete {
            guard sharedDatabases[user]?.storage.zones.contains(zone) == true else {
                deleteResults[zone] = .failure(.zoneNotFound(zone))
                continue
            }
            let owner = zone.ownerName
            let shares = users[owner]?.storage.shares(in: zone.ownersName(ownedBy: owner)) ?? []
            // Only the shares the user joined: an invitation they haven't accepted stays open.
            let joined = shares.filter { SharedDatabaseRules.hasAccepted($0, user) }
            leaveShares(joined.map(\.id), ownedBy: owner, as: user)
            deleteResults[zone] = .success(())
        }
        return (saveResults, deleteResults)
    }
}
