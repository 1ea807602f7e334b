import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

/// One database of the in-memory server in one transaction: its records, logs and subscriptions, with the
/// server's counters.
package struct InMemoryTransaction: CloudStorageTransaction {
    var database: InMemoryUserDatabase
    package let now: Date
    package let changeTags: ChangeTagSequence
    /// The generation the next new change log gets, handed back to the storage when the transaction ends.
    var nextGeneration: Int

    // MARK: Records

    package func record(withID id: CloudRecord.ID) -> CloudRecord? { database.storage.record(withID: id) }

    package func ancestor(of id: CloudRecord.ID, changeTag: String) -> CloudRecord? {
        database.storage.ancestor(of: id, changeTag: changeTag)
    }

    package func referenceHolders(of id: CloudRecord.ID) -> [(holder: CloudRecord.ID, action: CloudReference.Action)] {
        database.storage.referenceHolders(of: id)
    }

    package func containsZone(_ zoneID: CloudRecord.ZoneID) -> Bool { database.storage.containsZone(zoneID) }

    package func missingZoneError(_ zoneID: CloudRecord.ZoneID) -> CloudDatabaseError? {
        database.storage.missingZoneError(zoneID)
    }

    package func skeleton(of id: CloudRecord.ID) -> CloudRecord? { database.storage.record(withID: id) }

    package func hasChildren(_ id: CloudRecord.ID) -> Bool { database.storage.hasChildren(id) }

    /// The record as stored: its assets' files are the copies made when it was saved.
    package func withAssetFiles(_ record: CloudRecord) -> CloudRecord { record }

    package func records(matching query: CloudQuery, in zone: CloudRecord.ZoneID) -> [CloudRecord] {
        database.storage.records.values.filter {
            $0.id.zoneID == zone && $0.recordType == query.recordType && query.predicate.matches($0)
        }
    }

    package func zones() -> [CloudRecord.ZoneID] {
        database.storage.zones.sorted { ($0.zoneName, $0.ownerName) < ($1.zoneName, $1.ownerName) }
    }

    package func containsRecords(in zone: CloudRecord.ZoneID) -> Bool {
        database.storage.records.keys.contains { $0.zoneID == zone }
    }

    package func shares(in zone: CloudRecord.ZoneID) -> [CloudRecord] { database.storage.shares(in: zone) }

    package func allShares() -> [CloudRecord] {
        zones().flatMap { database.storage.shares(in: $0) }
    }

    package func share(withShortGUID shortGUID: String) -> CloudRecord? {
        database.storage.share(withShortGUID: shortGUID)
    }

    package func skeletons(in zone: CloudRecord.ZoneID) -> [CloudRecord] { database.storage.records(in: zone) }

    package func copies(of ids: [CloudRecord.ID], sharedBy owner: String) -> SharedRecordCopies {
        SharedRecordCopies(
            records: ids.compactMap { record(withID: $0)?.movingZones { $0.sharedName(ownedBy: owner) } })
    }

    package func changeTags(in zone: CloudRecord.ZoneID) -> [String: String] {
        Dictionary(
            database.storage.records(in: zone).map { ($0.id.recordName, $0.systemFields?.changeTag ?? "") },
            uniquingKeysWith: { first, _ in first })
    }

    package func subscriptions() -> [CloudSubscription] {
        database.subscriptions.values.sorted { $0.id < $1.id }
    }

    // MARK: Writing

    /// Writes the records; their assets' files are the storage's copies already (`storingAssets(of:contents:)`).
    package mutating func write(
        _ stored: [CloudRecord], removing removed: [CloudRecord.ID], contents: [AssetKey: Data], asCopy: Bool
    ) {
        let gone = removed.compactMap { id in database.storage.records[id].map { (id: id, recordType: $0.recordType) } }
        database.storage.apply(writing: stored, removing: gone.map(\.id))
        database.logRecordChanges(written: stored, removed: gone)
    }

    package mutating func createZone(_ zone: CloudRecord.ZoneID) -> Bool {
        let existed = database.storage.zones.contains(zone)
        database.createZone(zone, generation: nextGeneration)
        if !existed { nextGeneration += 1 }
        return !existed
    }

    package mutating func deleteZone(_ zone: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason) -> Bool {
        guard database.storage.zones.contains(zone) else { return false }
        database.deleteZone(zone, reason: reason)
        return true
    }

    package mutating func save(_ subscription: CloudSubscription) {
        database.subscriptions[subscription.id] = subscription
    }

    package mutating func deleteSubscription(_ id: CloudSubscription.ID) -> Bool {
        database.subscriptions.removeValue(forKey: id) != nil
    }
}

extension InMemoryTransaction {
    package func zoneLogBounds(_ zoneID: CloudRecord.ZoneID) -> ChangeLogBounds? {
        database.zoneLogs[zoneID].map { ChangeLogBounds(generation: $0.generation, start: $0.startSequence) }
    }

    package func recordChanges(
        in zoneID: CloudRecord.ZoneID, after sequence: Int, limit: Int, desiredKeys: [String]?
    ) -> (modifications: [CloudRecord], deletions: [CloudRecordDeletion], through: Int, more: Bool) {
        guard let page = database.zoneLogs[zoneID]?.changes(after: sequence, limit: limit) else {
            return ([], [], sequence, false)
        }
        var modifications: [CloudRecord] = []
        var deletions: [CloudRecordDeletion] = []
        for (id, change) in page.changes {
            switch change {
            case .saved:
                if let record = record(withID: id) { modifications.append(record.keepingFields(desiredKeys)) }
            case .deleted(let recordType):
                deletions.append(CloudRecordDeletion(id: id, recordType: recordType))
            }
        }
        return (modifications, deletions, page.through, page.more)
    }

    package func databaseLogBounds() -> ChangeLogBounds {
        ChangeLogBounds(generation: database.databaseLog.generation, start: database.databaseLog.startSequence)
    }

    package func zoneChanges(after sequence: Int, limit: Int)
        -> (changes: [(zoneID: CloudRecord.ZoneID, deletion: CloudZoneDeletion.Reason?)], through: Int, more: Bool)
    {
        let page = database.databaseLog.changes(after: sequence, limit: limit)
        return (page.changes.map { ($0.key.zone, $0.change) }, page.through, page.more)
    }
}
