import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitRules
import NestedCloudKitServer

/// One transaction of a SQLite file, as the server reads and writes a database (`CloudStorageTransaction`): its
/// records (read and written in `SQLiteTransaction+Records.swift`), its change log (``SQLiteChangeLog``), its
/// subscriptions and its change tags, all committed together.
package struct SQLiteTransaction: CloudStorageTransaction {
    let database: Database
    let assets: AssetFiles
    let log: SQLiteChangeLog
    /// What the transaction has already read, so the rules and the writes don't ask SQLite twice.
    let memo = Memo()
    package let now: Date
    /// The change tags given in this transaction, counting up from the file's counter (stored when it ends).
    package let changeTags: ChangeTagSequence
    private let firstTag: Int
    /// The rows of the records deleted, whose asset files can go once the transaction commits.
    private(set) var deletedRows: [Int64] = []
    private var removedAny = false

    /// Reads remembered within one transaction.
    final class Memo {
        var zones: [CloudRecord.ZoneID: Bool] = [:]
        var rows: [CloudRecord.ID: Row?] = [:]
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
    }

    /// A transaction of the file; a read one gives no change tags.
    init(database: Database, assets: AssetFiles, now: Date, writing: Bool) throws {
        self.database = database
        self.assets = assets
        log = SQLiteChangeLog(database: database)
        self.now = now
        firstTag =
            writing
            ? try Int.fetchOne(database, sql: "SELECT value FROM metadata WHERE key = 'change_counter'") ?? 0 : 0
        changeTags = ChangeTagSequence(after: firstTag)
    }

    /// Stores the change tag counter, and compacts the log if records were deleted.
    func finish(keepingTombstones maximumTombstones: Int) throws {
        if changeTags.last != firstTag {
            try database.execute(
                sql: "UPDATE metadata SET value = ? WHERE key = 'change_counter'", arguments: [changeTags.last])
        }
        if removedAny { try log.compact(keepingTombstones: maximumTombstones) }
    }

    // MARK: Records

    package func withAssetFiles(_ record: CloudRecord) throws -> CloudRecord {
        guard record.fields.contains(where: { !$0.value.assets.isEmpty }),
            let rowID: Int64 = try storedRecord(withID: record.id)?["id"]
        else { return record }
        var located = record
        try attachAssets(to: &located, rowID: rowID)
        return located
    }

    package func records(matching query: CloudQuery, in zone: CloudRecord.ZoneID) throws -> [CloudRecord] {
        let matches = try QueryPlanner(transaction: self).records(matching: query, in: zone)
        // Kept, so that a page's records with assets find their rows without reading them again.
        for (row, record) in matches { memo.rows[record.id] = .some(row) }
        return matches.map(\.record)
    }

    package func zones() throws -> [CloudRecord.ZoneID] {
        try Row.fetchAll(database, sql: "SELECT zone_name, owner_name FROM zone ORDER BY zone_name, owner_name")
            .map { CloudRecord.ZoneID(zoneName: $0[0], ownerName: $0[1]) }
    }

    package func containsRecords(in zone: CloudRecord.ZoneID) throws -> Bool {
        try Bool.fetchOne(
            database, sql: "SELECT EXISTS (SELECT 1 FROM record WHERE zone_name = ? AND owner_name = ?)",
            arguments: [zone.zoneName, zone.ownerName]) ?? false
    }

    /// The records and their assets' contents, for a viewer's file.
    package func copies(of ids: [CloudRecord.ID], sharedBy owner: String) throws -> SharedRecordCopies {
        let records = try ids.compactMap { try record(withID: $0) }
        let withAssets = records.filter { record in record.fields.contains { !$0.value.assets.isEmpty } }
        let toShared = { (zone: CloudRecord.ZoneID) in zone.sharedName(ownedBy: owner) }
        return SharedRecordCopies(
            records: records.map { $0.movingZones(toShared) },
            contents: Dictionary(
                try assetContents(of: withAssets.map(\.id)).map { ($0.key.movingZone(toShared), $0.value) },
                uniquingKeysWith: { first, _ in first }))
    }

    package func subscriptions() throws -> [CloudSubscription] {
        let decoder = JSONDecoder()
        return try String.fetchAll(database, sql: "SELECT body FROM subscription ORDER BY id").compactMap {
            // A subscription a newer version wrote in a form this one doesn't read is skipped, not fatal.
            try? decoder.decode(CloudSubscription.self, from: Data($0.utf8))
        }
    }

    // MARK: Writing

    package mutating func write(
        _ records: [CloudRecord], removing removed: [CloudRecord.ID], contents: [AssetKey: Data], asCopy: Bool
    ) throws {
        let gone = try removed.compactMap { id in
            try storedRecord(withID: id).map { (id: id, recordType: $0["record_type"] as String) }
        }
        deletedRows += try writeRows(records, removing: gone.map(\.id), contents: contents, keepingVersions: !asCopy)
        try log.logRecordChanges(written: records.map(\.id), removed: gone)
        removedAny = removedAny || !gone.isEmpty
    }

    package mutating func createZone(_ zone: CloudRecord.ZoneID) throws -> Bool {
        forgetZones()
        try database.execute(
            sql: "INSERT OR IGNORE INTO zone (zone_name, owner_name) VALUES (?, ?)",
            arguments: [zone.zoneName, zone.ownerName])
        guard database.changesCount > 0 else { return false }
        try log.logZoneCreated(zone)
        return true
    }

    package mutating func deleteZone(_ zone: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason) throws -> Bool {
        forgetZones()
        let rows = try Int64.fetchAll(
            database, sql: "SELECT id FROM record WHERE zone_name = ? AND owner_name = ?",
            arguments: [zone.zoneName, zone.ownerName])
        try database.execute(
            sql: "DELETE FROM zone WHERE zone_name = ? AND owner_name = ?", arguments: [zone.zoneName, zone.ownerName])
        guard database.changesCount > 0 else { return false }
        try log.logZoneDeleted(zone, reason: reason)
        deletedRows += rows
        return true
    }

    package mutating func save(_ subscription: CloudSubscription) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try database.execute(
            sql: "INSERT OR REPLACE INTO subscription (id, body) VALUES (?, ?)",
            arguments: [subscription.id, String(decoding: try encoder.encode(subscription), as: UTF8.self)])
    }

    package mutating func deleteSubscription(_ id: CloudSubscription.ID) throws -> Bool {
        try database.execute(sql: "DELETE FROM subscription WHERE id = ?", arguments: [id])
        return database.changesCount > 0
    }
}

extension SQLiteTransaction {
    package func zoneLogBounds(_ zoneID: CloudRecord.ZoneID) throws -> ChangeLogBounds? {
        try log.zone(zoneID).map {
            ChangeLogBounds(generation: $0.generation, start: $0.startSequence, horizon: $0.horizon)
        }
    }

    package func recordChanges(
        in zoneID: CloudRecord.ZoneID, after sequence: Int, limit: Int, desiredKeys: [String]?
    ) throws -> (modifications: [CloudRecord], deletions: [CloudRecordDeletion], through: Int, more: Bool) {
        guard let zone = try log.zone(zoneID) else { return ([], [], sequence, false) }
        let page = try log.recordChanges(in: zoneID, after: sequence, limit: limit, zone: zone)
        // Assets are attached only when a field of them is returned: `desiredKeys: []` reads no file.
        let withAssets = desiredKeys.map { !$0.isEmpty } ?? true
        var modifications: [CloudRecord] = []
        var deletions: [CloudRecordDeletion] = []
        for change in page.changes {
            let id = CloudRecord.ID(recordName: change.recordName, zoneID: zoneID)
            if let recordType = change.deletedRecordType {
                deletions.append(CloudRecordDeletion(id: id, recordType: recordType))
            } else if let row = try storedRecord(withID: id) {
                modifications.append(try decode(row, id: id, withAssets: withAssets).keepingFields(desiredKeys))
            }
        }
        return (modifications, deletions, page.through, page.more)
    }

    package func databaseLogBounds() throws -> ChangeLogBounds {
        ChangeLogBounds(generation: try log.databaseLog().generation, start: 0)
    }

    package func zoneChanges(after sequence: Int, limit: Int) throws
        -> (changes: [(zoneID: CloudRecord.ZoneID, deletion: CloudZoneDeletion.Reason?)], through: Int, more: Bool)
    {
        try log.zoneChanges(after: sequence, limit: limit)
    }
}
