import Foundation

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

    /// Brings up to date the shared database of every user who may see one of these zones of `owner`: the
    /// participants who accepted one of its shares, and the users whose shared database shows it now.
    func refreshSharedDatabases(showingZones zones: [CloudRecord.ZoneID], ownedBy owner: String) {
        var refreshed: Set<CloudRecord.ZoneID> = []
        for zone in zones where zone != .default && refreshed.insert(zone).inserted {
            let sharedZone = zone.sharedName(ownedBy: owner)
            let storage = users[owner]?.storage ?? InMemoryRecordStore()
            let shares = storage.shares(in: zone)
            var viewers = Set(
                shares.flatMap { share in
                    (share.shareContents?.participants ?? []).compactMap { participant in
                        participant.role != .owner && participant.acceptanceStatus == .accepted
                            ? participant.userRecordName : nil
                    }
                })
            for (viewer, database) in sharedDatabases where database.storage.zones.contains(sharedZone) {
                viewers.insert(viewer)
            }
            viewers.remove(owner)
            guard !viewers.isEmpty else { continue }
            let records = shares.isEmpty ? [] : storage.records(in: zone)
            for viewer in viewers.sorted() {
                let visible = records.filter { record in
                    (try? ShareAccess.permission(of: viewer, on: record.id, in: storage, shares: shares)) != nil
                }
                show(visible.map { $0.movingZones { $0.sharedName(ownedBy: owner) } }, in: sharedZone, to: viewer)
            }
        }
    }

    /// Makes a zone of `viewer`'s shared database hold exactly these records, logging what changed: the zone
    /// appears with its first record and is deleted with its last.
    private func show(_ visible: [CloudRecord], in zone: CloudRecord.ZoneID, to viewer: String) {
        // Taken out while it changes, so that the dictionary's copy doesn't make the change copy the whole store.
        var database = sharedDatabases.removeValue(forKey: viewer) ?? .shared(generation: takeGeneration())
        defer { sharedDatabases[viewer] = database }
        let shown = database.storage.zones.contains(zone)
        if visible.isEmpty {
            guard shown else { return }
            database.deleteZone(zone, reason: .deleted)
        } else {
            if !shown { database.createZone(zone, generation: takeGeneration()) }
            let visibleIDs = Set(visible.map(\.id))
            let written = visible.filter { database.storage.records[$0.id] != $0 }
                .sorted { $0.id.recordName < $1.id.recordName }
            let removed = database.storage.records(in: zone).filter { !visibleIDs.contains($0.id) }
                .sorted { $0.id.recordName < $1.id.recordName }
                .map { (id: $0.id, recordType: $0.recordType) }
            guard !shown || !written.isEmpty || !removed.isEmpty else { return }
            database.storage.apply(writing: written, removing: removed.map(\.id))
            database.logRecordChanges(written: written, removed: removed)
        }
        sharedDatabases[viewer] = database
        databasesChangedByOthers.insert(ChangedDatabase(userRecordName: viewer, scope: .shared))
        notifySubscribers(of: viewer, scope: .shared, ofChangesIn: [zone])
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
            let toOwner = { (zone: CloudRecord.ZoneID) in zone.ownersName(ownedBy: owner) }
            let toShared = { (zone: CloudRecord.ZoneID) in zone.sharedName(ownedBy: owner) }
            var refusals: [CloudRecord.ID: CloudDatabaseError] = [:]
            var planned: [CloudRecordOperation] = []
            var leaving: [CloudRecord.ID] = []
            do {
                let storage = users[owner]?.storage ?? InMemoryRecordStore()
                let owned = operations.map { $0.movingZones(toOwner) }
                var toCheck: [CloudRecordOperation] = []
                for operation in owned {
                    let id = operation.id
                    if let failure = failures[id.movingZone(toShared)] { refusals[id] = failure.movingZones(toOwner) }
                    if !shownZones.contains(id.zoneID.sharedName(ownedBy: owner)) || owner == user {
                        refusals[id] = refusals[id] ?? .zoneNotFound(id.zoneID)
                    } else if refusals[id] == nil, operation.recordToSave == nil,
                        let share = storage.records[id], Self.hasAccepted(share, user)
                    {
                        // A participant deleting a share they joined leaves it; any other change to a share is
                        // the owner's, refused below.
                        leaving.append(id)
                        continue
                    } else if refusals[id] == nil {
                        toCheck.append(operation)
                    }
                    planned.append(operation)
                }
                // A new child's new parent, saved in the same request, leads to the share as a stored one would,
                // unless the parent's own save is refused: checked again until no refusal uncovers another.
                let created = Dictionary(
                    owned.compactMap(\.recordToSave).filter { storage.records[$0.id] == nil }.map { ($0.id, $0) }
                ) { first, _ in first }
                var permissionRefusals: [CloudRecord.ID: CloudDatabaseError] = [:]
                var refusedMore = true
                while refusedMore {
                    refusedMore = false
                    let batch = created.filter { refusals[$0.key] == nil && permissionRefusals[$0.key] == nil }
                    for operation in toCheck where permissionRefusals[operation.id] == nil {
                        let refusal = try Self.sharedWriteRefusal(
                            operation, by: user, named: operation.id.movingZone(toShared), in: storage,
                            shares: storage.shares(in: operation.id.zoneID), batch: batch)
                        if let refusal {
                            permissionRefusals[operation.id] = refusal
                            refusedMore = true
                        }
                    }
                }
                refusals.merge(permissionRefusals) { earlier, _ in earlier }
            }
            let (saved, deleted) = try applyModification(
                planned, atomically: atomically, failing: refusals, toZonesOf: owner,
                madeBy: user)
            for (id, result) in saved {
                saveResults[id.movingZone(toShared)] = result.map { $0.movingZones(toShared) }
                    .mapError { $0.movingZones(toShared) }
            }
            for (id, result) in deleted {
                deleteResults[id.movingZone(toShared)] = result.mapError { $0.movingZones(toShared) }
            }
            for id in leaving { deleteResults[id.movingZone(toShared)] = .success(()) }
            leaveShares(leaving, ownedBy: owner, as: user)
        }
        return (saveResults, deleteResults)
    }

    /// Whether `user` joined this share: an accepted participant, not its owner.
    private static func hasAccepted(_ share: CloudRecord, _ user: String) -> Bool {
        share.shareContents?.participants.contains {
            $0.userRecordName == user && $0.role != .owner && $0.acceptanceStatus == .accepted
        } == true
    }

    /// Why the shares `user` accepted don't let them make this change to the owner's record, or `nil` when they
    /// do.
    ///
    /// - Parameter shownID: The record's ID as the user names it, for the messages.
    private static func sharedWriteRefusal(
        _ operation: CloudRecordOperation, by user: String, named shownID: CloudRecord.ID,
        in storage: InMemoryRecordStore, shares: [CloudRecord],
        batch: [CloudRecord.ID: CloudRecord]
    ) throws -> CloudDatabaseError? {
        let id = operation.id
        let stored = storage.records[id]
        if stored?.recordType == CloudShare.recordType || operation.recordToSave?.recordType == CloudShare.recordType {
            return .permissionFailure(
                "\(user) can't save share \(shownID): only its owner changes a share's participants and permissions; a "
                    + "participant leaves a share by deleting it from their shared database")
        }
        let permission: CloudShare.Permission?
        if let record = operation.recordToSave {
            permission = try ShareAccess.permission(
                of: user, forSaving: record, in: storage, shares: shares, batch: batch)
        } else if stored != nil {
            permission = try ShareAccess.permission(of: user, on: id, in: storage, shares: shares)
        } else {
            return .unknownItem(id)
        }
        switch permission {
        case .readWrite?:
            return nil
        case .readOnly?, CloudShare.Permission.none?:
            return .permissionFailure(
                "\(user) has read-only access to \(shownID) through the share: ask its owner for read-write permission")
        case nil where stored == nil:
            return .permissionFailure(
                "new record \(shownID) isn't in a hierarchy shared with \(user): set its parent to a shared record, so "
                    + "that the share covers it")
        case nil:
            // The record exists, but no share the user accepted covers it: they can't know of it.
            return operation.recordToSave == nil
                ? .unknownItem(id)
                : .permissionFailure(
                    "\(user) can't write \(shownID): no share they accepted covers it")
        }
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
    package struct ChangedDatabase: Hashable, Sendable {
        package var userRecordName: String
        package var scope: CloudNotification.DatabaseScope

        package init(userRecordName: String, scope: CloudNotification.DatabaseScope) {
            self.userRecordName = userRecordName
            self.scope = scope
        }
    }

    // MARK: Zones of the shared database

    /// Zones in `user`'s shared database: none can be created there, and deleting one leaves every share of it
    /// the user accepted, as in CloudKit.
    func modifySharedZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID], as user: String
    ) -> CloudZoneModifyResults {
        var saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        for zone in zonesToSave {
            saveResults[zone] = .failure(
                .permissionFailure(
                    "zone \(zone) can't be created in the shared database, which shows only the zones others share "
                        + "with \(user): create it in the private database and share it from there"))
        }
        for zone in zonesToDelete {
            guard sharedDatabases[user]?.storage.zones.contains(zone) == true else {
                deleteResults[zone] = .failure(.zoneNotFound(zone))
                continue
            }
            let owner = zone.ownerName
            let shares = users[owner]?.storage.shares(in: zone.ownersName(ownedBy: owner)) ?? []
            // Only the shares the user joined: an invitation they haven't accepted stays open.
            let joined = shares.filter { Self.hasAccepted($0, user) }
            leaveShares(joined.map(\.id), ownedBy: owner, as: user)
            deleteResults[zone] = .success(())
        }
        return (saveResults, deleteResults)
    }
}
