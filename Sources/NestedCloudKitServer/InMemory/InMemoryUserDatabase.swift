import NestedCloudKitCodable

/// One user's private database in an ``InMemoryCloudDatabase``, or their shared database (a copy of what others
/// share with them): the records and zones, the change logs that answer "what changed since this token", and the
/// subscriptions.
struct InMemoryUserDatabase: Sendable {
    /// A change to a record, as a zone's log keeps it.
    enum RecordChange {
        case saved
        case deleted(recordType: String)
    }

    var storage = InMemoryRecordStore()
    /// The log of each custom zone; the default zone keeps none, as in CloudKit.
    var zoneLogs: [CloudRecord.ZoneID: InMemoryChangeLog<CloudRecord.ID, RecordChange>] = [:]
    /// What the database log keeps of a zone: its latest change, its latest deletion and its latest purge, each
    /// superseding only what a client no longer needs to know.
    ///
    /// A deletion supersedes the zone's earlier changes and deletions, a purge everything before it; a change (the
    /// zone created again) supersedes only earlier changes. So a client that missed a deletion or a purge still
    /// learns of it after the zone was created again (deleted first, then changed, in the log's order), and a
    /// purge, which tells a device to delete its local copy, is never hidden by a later plain deletion.
    struct DatabaseLogKey: Hashable {
        enum Slot: Hashable {
            case changed, deleted, purged
        }

        var zone: CloudRecord.ZoneID
        var slot: Slot
    }

    /// The log of zones changed (`nil`) and deleted (with the reason).
    var databaseLog: InMemoryChangeLog<DatabaseLogKey, CloudZoneDeletion.Reason?>
    var subscriptions: [CloudSubscription.ID: CloudSubscription] = [:]
    /// The last sequence number given to a change; one counter for every log, so a database token orders zones.
    private(set) var sequence = 0

    init(generation: Int) {
        databaseLog = InMemoryChangeLog(generation: generation, startSequence: 0)
    }

    /// An empty shared database: it has no default zone, only the zones others share with the user.
    static func shared(generation: Int) -> InMemoryUserDatabase {
        var database = InMemoryUserDatabase(generation: generation)
        database.storage.zones = []
        return database
    }

    /// Records the effects of a modify request: the records written and removed, in order.
    mutating func logRecordChanges(written: [CloudRecord], removed: [(id: CloudRecord.ID, recordType: String)]) {
        var changedZones: [CloudRecord.ZoneID] = []
        for record in written { changedZones.append(record.id.zoneID) }
        for (id, _) in removed { changedZones.append(id.zoneID) }
        for record in written where zoneLogs[record.id.zoneID] != nil {
            sequence += 1
            zoneLogs[record.id.zoneID]?.append(.saved, for: record.id, sequence: sequence)
        }
        for (id, recordType) in removed where zoneLogs[id.zoneID] != nil {
            sequence += 1
            zoneLogs[id.zoneID]?.append(.deleted(recordType: recordType), for: id, sequence: sequence)
        }
        var seen: Set<CloudRecord.ZoneID> = []
        for zone in changedZones where zone != .default && seen.insert(zone).inserted {
            logZoneChanged(zone)
        }
    }

    private mutating func logZoneChanged(_ zone: CloudRecord.ZoneID) {
        sequence += 1
        databaseLog.append(nil, for: DatabaseLogKey(zone: zone, slot: .changed), sequence: sequence)
    }

    /// Creates a zone with a new, empty log; a zone that exists is left as it is.
    mutating func createZone(_ zone: CloudRecord.ZoneID, generation: Int) {
        storage.purgedZones.remove(zone)
        guard !storage.zones.contains(zone) else { return }
        storage.zones.insert(zone)
        guard zone != .default else { return }
        zoneLogs[zone] = InMemoryChangeLog(generation: generation, startSequence: sequence + 1)
        logZoneChanged(zone)
    }

    /// Deletes a zone, its records and its log, and logs the deletion with its reason (`DatabaseLogKey`).
    mutating func deleteZone(_ zone: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason) {
        storage.removeZone(zone)
        zoneLogs[zone] = nil
        databaseLog.remove(DatabaseLogKey(zone: zone, slot: .changed))
        if reason == .purged {
            storage.purgedZones.insert(zone)
            databaseLog.remove(DatabaseLogKey(zone: zone, slot: .deleted))
        }
        sequence += 1
        databaseLog.append(
            reason, for: DatabaseLogKey(zone: zone, slot: reason == .purged ? .purged : .deleted), sequence: sequence)
    }

    /// Starts every log again in a new generation, so that every token given so far is expired; each log starts
    /// with the zone's current records, so a client starting again with a `nil` token gets all of them (and no
    /// tombstones from before, as after CloudKit expires a token). Returns the last generation used.
    mutating func expireTokens(firstGeneration: Int) -> Int {
        var generation = firstGeneration
        databaseLog = InMemoryChangeLog(generation: generation, startSequence: sequence)
        let recordsByZone = Dictionary(grouping: storage.records.values, by: \.id.zoneID)
        for zone in zoneLogs.keys.sorted(by: { $0.zoneName < $1.zoneName }) {
            generation += 1
            var log = InMemoryChangeLog<CloudRecord.ID, RecordChange>(generation: generation, startSequence: sequence)
            let records = (recordsByZone[zone] ?? []).sorted { $0.id.recordName < $1.id.recordName }
            for record in records {
                sequence += 1
                log.append(.saved, for: record.id, sequence: sequence)
            }
            zoneLogs[zone] = log
            logZoneChanged(zone)
        }
        return generation
    }
}
