import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitRules

/// One row of `ncs_record`: a record as the app sees it, with what the engine needs to sync it.
struct StoredRecord: Sendable {
    /// The app's record: its fields, and the system fields of the server copy it was last saved or fetched with.
    var record: CloudRecord
    /// The last copy of the record the server gave: the base of three-way merges; `nil` if it never reached it.
    var ancestor: CloudRecord? {
        didSet { ancestorBytes = nil }
    }
    /// The ancestor's bytes as read, written back as they are while the ancestor is unchanged: a local edit
    /// rewrites the record, not the server's copy.
    var ancestorBytes: Data?
    /// When the user last changed any field, in milliseconds since 1970.
    var editTime: Int64
    /// When the user last changed each field.
    var fieldEditTimes: [String: Int64]
    /// Bumped on every write to the row, so that a write prepared from an older read can tell.
    var version: Int64

    var id: CloudRecord.ID { record.id }
}

/// One row of `ncs_outbox`: a change the server doesn't have yet.
struct OutboxEntry: Sendable, Hashable {
    enum Operation: String, Sendable { case save, delete }

    var id: CloudRecord.ID
    var operation: Operation
    var recordType: String
    /// The version of the record that must reach the server; an acknowledgement of an older one leaves the entry.
    var version: Int64
    /// The order changes were first made in: references are saved after their targets, as the encoder ordered them.
    var sequence: Int64
    /// For a delete: the server copy of the deleted record, so a re-created record updates it instead of conflicting.
    var ancestor: CloudRecord?
    var failures: Int
    var lastError: String?
    var halted: Bool
    /// Whether a version of the change was ever sent: the server may have applied it even if no answer came.
    var sent: Bool
    /// The copies of the record sent without an answer since the server's copy was last known (edit times
    /// included, at most ``maximumSentCopies``): the server may hold any of them, and each, fetched back, is this
    /// device's own write, not another device's change.
    var sentCopies: [CloudRecord] = []

    /// The most copies sent without an answer a pending change remembers: each needs a lost answer, so more than
    /// a few means the answers never come, and the oldest can't be on the server any more than the newer ones.
    static let maximumSentCopies = 4

    /// Whether the record is one of the copies sent without an answer.
    func isSentCopy(_ record: CloudRecord) -> Bool {
        sentCopies.contains { AssetFiles.sameContents($0.fields, record.fields) }
    }
}

/// Reading and writing rows, inside a transaction the caller holds.
enum StoreTables {
    // MARK: Records

    static func record(_ id: CloudRecord.ID, in db: Database) throws -> StoredRecord? {
        try StatementValues.first(
            try db.cachedStatement(
                sql: """
                    SELECT record, ancestor, edit_time, field_edit_times, version FROM ncs_record
                    WHERE zone_owner = ? AND zone_name = ? AND record_name = ?
                    """), arguments: [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName]
        ) { row in
            guard let record = try row.data(0), let editTimes = try row.data(3) else {
                throw SyncError.store("the store's row of \(id) has no record")
            }
            return try storedRecord(
                record: record, ancestor: try row.data(1), editTime: try row.int64(2), fieldEditTimes: editTimes,
                version: try row.int64(4))
        }
    }

    /// Whether the store has a record, read without it.
    static func contains(_ id: CloudRecord.ID, in db: Database) throws -> Bool {
        try StatementValues.first(
            try db.cachedStatement(
                sql: "SELECT 1 FROM ncs_record WHERE zone_owner = ? AND zone_name = ? AND record_name = ?"),
            arguments: [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName]
        ) { _ in true } ?? false
    }

    /// Whether any pending change is a deletion.
    static func hasPendingDeletions(in db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ncs_outbox WHERE operation = 'delete')")) ?? false
    }

    /// The records with these IDs the store has (in no particular order): a statement per zone and few hundred
    /// names, each a search of the primary key.
    static func records(_ ids: [CloudRecord.ID], in db: Database) throws -> [CloudRecord] {
        var records: [CloudRecord] = []
        records.reserveCapacity(ids.count)
        try readRecords(ids, in: db) { record, _ in records.append(record) }
        return records
    }

    /// As ``records(_:in:)``, each record handed to `receive` with its row as it is read.
    static func readRecords(
        _ ids: [CloudRecord.ID], in db: Database, receive: (consuming CloudRecord, _ row: Int64) -> Void
    ) throws {
        let shared = RecordCoding.SharedStrings()
        // Nearly always one zone: grouping by zone hashes two names an ID, so it's done only when needed.
        let byZone: [CloudRecord.ZoneID: [CloudRecord.ID]]
        if let zone = ids.first?.zoneID, ids.allSatisfy({ $0.zoneID == zone }) {
            byZone = [zone: ids]
        } else {
            byZone = Dictionary(grouping: ids, by: \.zoneID)
        }
        for (zone, ids) in byZone {
            var start = 0
            while start < ids.count {
                let end = min(ids.count, start + batchSizes[batchSizes.count - 1])
                // A few statement sizes, the names padded with the last one, so a handful of statements is cached.
                let size = batchSizes.first { $0 >= end - start } ?? (end - start)
                let statement = try db.cachedStatement(sql: recordsByNameSQL(size))
                // Strings, not existentials: GRDB converts an array of one type without a dynamic cast per value.
                var arguments: [String] = [zone.ownerName, zone.zoneName]
                arguments.reserveCapacity(size + 2)
                for id in ids[start..<end] { arguments.append(id.recordName) }
                for _ in (end - start)..<size { arguments.append(ids[end - 1].recordName) }
                let cursor = try Row.fetchCursor(statement, arguments: StatementArguments(arguments))
                while let row = try cursor.next() {
                    receive(try RecordCoding.decode(row, column: 0, sharing: shared), row[1])
                }
                start = end
            }
        }
    }

    /// The statement of ``records(_:in:)`` for a number of names: made once for each of the batch sizes.
    private static func recordsByNameSQL(_ size: Int) -> String {
        batchSizes.firstIndex(of: size).map { recordsByNameSQLs[$0] } ?? makeRecordsByNameSQL(size)
    }

    private static let recordsByNameSQLs = batchSizes.map(makeRecordsByNameSQL)

    private static func makeRecordsByNameSQL(_ size: Int) -> String {
        "SELECT record, rowid FROM ncs_record WHERE zone_owner = ? AND zone_name = ? AND record_name IN ("
            + Array(repeating: "?", count: size).joined(separator: ",") + ")"
    }

    /// The rows of every record of a type in a zone, by record name; the record is the first column, its row the
    /// second.
    static func rows(ofType recordType: String, in zone: CloudRecord.ZoneID, in db: Database) throws -> RowCursor {
        try Row.fetchCursor(
            try db.cachedStatement(
                sql: """
                    SELECT record, rowid FROM ncs_record
                    WHERE record_type = ? AND zone_key = (
                        SELECT key FROM ncs_zone_key WHERE zone_owner = ? AND zone_name = ?)
                    ORDER BY record_name
                    """), arguments: [recordType, zone.ownerName, zone.zoneName])
    }

    /// Every record of a type in a zone, by record name, read in place.
    static func records(ofType recordType: String, in zone: CloudRecord.ZoneID, in db: Database) throws
        -> [CloudRecord]
    {
        let cursor = try rows(ofType: recordType, in: zone, in: db)
        var records: [CloudRecord] = []
        let shared = RecordCoding.SharedStrings()
        while let row = try cursor.next() { records.append(try RecordCoding.decode(row, column: 0, sharing: shared)) }
        return records
    }

    /// The numbers of names a statement of ``records(_:in:)`` takes; the largest stays under SQLite's default
    /// limit of parameters.
    private static let batchSizes = [1, 8, 64, 500]

    static func storedRecord(_ row: Row) throws -> StoredRecord {
        try storedRecord(
            record: row["record"], ancestor: row["ancestor"], editTime: row["edit_time"],
            fieldEditTimes: row["field_edit_times"], version: row["version"])
    }

    private static func storedRecord(
        record bytes: Data, ancestor ancestorBytes: Data?, editTime: Int64, fieldEditTimes: Data, version: Int64
    ) throws -> StoredRecord {
        let record = try RecordCoding.decode(bytes)
        // An empty ancestor is the record itself: a synced record, stored once.
        let ancestor = try ancestorBytes.map { $0.isEmpty ? record : try RecordCoding.decode($0) }
        var stored = StoredRecord(
            record: record, ancestor: ancestor, editTime: editTime, fieldEditTimes: EditTimes.decode(fieldEditTimes),
            version: version)
        stored.ancestorBytes = ancestorBytes
        return stored
    }

    /// Writes a record's row (updated in place if it has one, so its row number stays) and its references; the
    /// row's version becomes a new one, returned.
    @discardableResult
    static func write(_ stored: StoredRecord, epoch: Int64? = nil, in db: Database) throws -> Int64 {
        var record = stored.record
        record.clearedFieldNames = []
        let version = try nextCounter(in: db)
        let id = record.id
        let system = record.systemFields
        // What queries sort on: the server's dates when it has the record, else the user's edit; a local edit
        // newer than the server's copy makes the record as new as the edit.
        let editSeconds = Double(stored.editTime) / 1000
        let modified = max(system?.modificationDate?.timeIntervalSince1970 ?? editSeconds, editSeconds)
        // The zone's number, which the declared indexes lead with (``StoreSchema``): made the first time a record of
        // the zone is written.
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO ncs_zone_key (zone_owner, zone_name) VALUES (?, ?)")
            .execute(arguments: [id.zoneID.ownerName, id.zoneID.zoneName])
        let written = try StatementValues.first(
            db.cachedStatement(
                sql: """
                    INSERT INTO ncs_record (zone_owner, zone_name, record_name, record_type, record, ancestor, edit_time,
                        field_edit_times, version, fetch_epoch, asset_files, fields, created_at, modified_at,
                        ancestor_tag, zone_key)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, COALESCE(?13, ?14), ?15, ?16, (
                        SELECT key FROM ncs_zone_key WHERE zone_owner = ?1 AND zone_name = ?2))
                    ON CONFLICT (zone_owner, zone_name, record_name) DO UPDATE SET
                        record_type = excluded.record_type, record = excluded.record, ancestor = excluded.ancestor,
                        edit_time = excluded.edit_time, field_edit_times = excluded.field_edit_times,
                        version = excluded.version, asset_files = excluded.asset_files, fields = excluded.fields,
                        created_at = COALESCE(?17, ncs_record.created_at), modified_at = excluded.modified_at,
                        ancestor_tag = excluded.ancestor_tag,
                        fetch_epoch = CASE WHEN ?18 IS NULL THEN ncs_record.fetch_epoch ELSE excluded.fetch_epoch END
                    RETURNING rowid, zone_key, created_at, modified_at
                    """),
            arguments: [
                id.zoneID.ownerName, id.zoneID.zoneName, id.recordName, record.recordType,
                RecordCoding.encode(record), ancestorBytes(of: stored, record: record),
                stored.editTime, EditTimes.encode(stored.fieldEditTimes), version, epoch ?? 0,
                // The fields' column of earlier layouts: the record type's table has them now.
                AssetFiles.fileList(in: [record, stored.ancestor]), "{}",
                system?.creationDate?.timeIntervalSince1970, editSeconds, modified,
                stored.ancestor?.systemFields?.changeTag,
                system?.creationDate?.timeIntervalSince1970, epoch,
            ]
        ) { written in
            (
                row: try written.int64(0), zoneKey: try written.int64(1), createdAt: try written.double(2),
                modifiedAt: try written.double(3)
            )
        }
        guard let written else { throw SyncError.store("the store wrote \(id) but SQLite returned no row") }
        let row = written.row
        try RecordTypeTable.write(
            record, row: row, zoneKey: written.zoneKey, createdAt: written.createdAt, modifiedAt: written.modifiedAt,
            in: db)
        try deleteReferences(of: id, in: db)
        try writeReferences(of: record, row: row, in: db)
        return version
    }

    /// A reference row for each reference the record holds, with the record's row and its target's when the store
    /// has the target (a target that comes later gets its row from a trigger, ``StoreSchema``).
    private static func writeReferences(of record: CloudRecord, row: Int64?, in db: Database) throws {
        let id = record.id
        for (field, value) in record.fields {
            for reference in value.references {
                let target = reference.recordID
                try db.cachedStatement(
                    sql: """
                        INSERT INTO ncs_reference (holder_zone_owner, holder_zone_name, holder_name, field, action,
                            target_zone_owner, target_zone_name, target_name, holder_row, target_row)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, (
                            SELECT rowid FROM ncs_record
                            WHERE zone_owner = ?6 AND zone_name = ?7 AND record_name = ?8))
                        """
                ).execute(arguments: [
                    id.zoneID.ownerName, id.zoneID.zoneName, id.recordName, field,
                    reference.action.rawValue, target.zoneID.ownerName, target.zoneID.zoneName,
                    target.recordName, row,
                ])
            }
        }
    }

    /// The ancestor column: empty for a record equal to its ancestor (a synced record), the bytes read if the
    /// ancestor is unchanged, else the ancestor encoded.
    private static func ancestorBytes(of stored: StoredRecord, record: CloudRecord) -> Data? {
        guard let ancestor = stored.ancestor else { return nil }
        if ancestor == record { return Data() }
        if let bytes = stored.ancestorBytes, !bytes.isEmpty { return bytes }
        return RecordCoding.encode(ancestor)
    }

    static func deleteRecord(_ id: CloudRecord.ID, in db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM ncs_record WHERE zone_owner = ? AND zone_name = ? AND record_name = ?")
            .execute(arguments: [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName])
        try deleteReferences(of: id, in: db)
    }

    private static func deleteReferences(of id: CloudRecord.ID, in db: Database) throws {
        try db.cachedStatement(
            sql: "DELETE FROM ncs_reference WHERE holder_zone_owner = ? AND holder_zone_name = ? AND holder_name = ?"
        ).execute(arguments: [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName])
    }

    /// The records that reference a record, with each reference's action: what the `.deleteSelf` walk
    /// (`DeleteSelfCascade`) follows.
    static func referenceHolders(of id: CloudRecord.ID, in db: Database) throws
        -> [(holder: CloudRecord.ID, action: CloudReference.Action)]
    {
        try holders(of: id, in: db).compactMap { found in found.action.map { (found.holder, $0) } }
    }

    /// The records that reference a record, with the field and the reference's action.
    static func holders(
        of id: CloudRecord.ID, field: String? = nil, in db: Database
    ) throws -> [(holder: CloudRecord.ID, field: String, action: CloudReference.Action?)] {
        var sql = """
            SELECT holder_zone_owner, holder_zone_name, holder_name, field, action FROM ncs_reference
            WHERE target_zone_owner = ? AND target_zone_name = ? AND target_name = ?
            """
        var arguments: StatementArguments = [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName]
        if let field {
            sql += " AND field = ?"
            arguments += [field]
        }
        sql += " ORDER BY holder_name"
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            let zone = CloudRecord.ZoneID(zoneName: row["holder_zone_name"], ownerName: row["holder_zone_owner"])
            let action = CloudReference.Action(rawValue: row["action"])
            return (CloudRecord.ID(recordName: row["holder_name"], zoneID: zone), row["field"], action)
        }
    }

    // MARK: Outbox

    static func outboxEntry(_ id: CloudRecord.ID, in db: Database) throws -> OutboxEntry? {
        // Looked for first, read in place: nearly every record a fetch applies has no pending change, and a read
        // of rows builds one (with a map of its column names) whether it finds one or not.
        let arguments: StatementArguments = [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName]
        guard
            try StatementValues.first(
                db.cachedStatement(
                    sql: "SELECT 1 FROM ncs_outbox WHERE zone_owner = ? AND zone_name = ? AND record_name = ?"),
                arguments: arguments, { _ in true }) == true
        else { return nil }
        let row = try Row.fetchOne(
            try db.cachedStatement(
                sql: "SELECT * FROM ncs_outbox WHERE zone_owner = ? AND zone_name = ? AND record_name = ?"),
            arguments: arguments)
        return try row.map(outboxEntry)
    }

    static func outboxEntry(_ row: Row) throws -> OutboxEntry {
        let zone = CloudRecord.ZoneID(zoneName: row["zone_name"], ownerName: row["zone_owner"])
        let operation = OutboxEntry.Operation(rawValue: row["operation"]) ?? .save
        return OutboxEntry(
            id: CloudRecord.ID(recordName: row["record_name"], zoneID: zone), operation: operation,
            recordType: row["record_type"], version: row["version"], sequence: row["sequence"],
            ancestor: try (row["ancestor"] as Data?).map { try JSONDecoder().decode(CloudRecord.self, from: $0) },
            failures: row["failures"], lastError: row["last_error"], halted: row["halted"], sent: row["sent"],
            sentCopies: try (row["sent_copies"] as Data?).map { try JSONDecoder().decode([CloudRecord].self, from: $0) }
                ?? [])
    }

    /// Queues a change, or replaces the one queued for the record; the first change keeps its place in the order
    /// and its time (``PendingChange/queuedAt``, by the store's clock through ``StoreClockFunction``).
    ///
    /// - Parameter restartingTime: Whether the replaced entry's time starts again: yes once the server has the
    ///   change it was queued for, and what stays is a newer one.
    ///
    /// - Parameter keepingSentCopies: Whether the copies sent without an answer stay remembered: yes for a change
    ///   the app makes on top of them (the server may still hold one); no once the server's copy is known again
    ///   (an acknowledgement, a fetch, a resolved conflict), which makes them history.
    static func enqueue(
        _ operation: OutboxEntry.Operation, id: CloudRecord.ID, recordType: String, version: Int64,
        ancestor: CloudRecord? = nil, keepingSentCopies: Bool = false, restartingTime: Bool = false, in db: Database
    ) throws {
        // The version is a fresh counter value too, so it orders a new entry; a replaced entry keeps its place.
        // A change of a record a fetch skipped stays halted, with the skip's reason, until the app asks again.
        let sequence = version
        try db.cachedStatement(
            sql: """
                INSERT INTO ncs_outbox (zone_owner, zone_name, record_name, operation, record_type, version,
                    sequence, ancestor, ancestor_files, halted, last_error, queued_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,
                    EXISTS (SELECT 1 FROM ncs_skipped
                        WHERE zone_owner = ?1 AND zone_name = ?2 AND record_name = ?3 AND retry = 0),
                    (SELECT reason FROM ncs_skipped
                        WHERE zone_owner = ?1 AND zone_name = ?2 AND record_name = ?3 AND retry = 0),
                    \(StoreClockFunction.name)())
                ON CONFLICT (zone_owner, zone_name, record_name) DO UPDATE SET
                    operation = excluded.operation, record_type = excluded.record_type, version = excluded.version,
                    ancestor = excluded.ancestor, ancestor_files = excluded.ancestor_files, failures = 0,
                    last_error = excluded.last_error, halted = excluded.halted,
                    sent_copies = CASE WHEN ?10 THEN ncs_outbox.sent_copies END,
                    sent_files = CASE WHEN ?10 THEN ncs_outbox.sent_files END,
                    queued_at = CASE WHEN ?11 THEN excluded.queued_at ELSE ncs_outbox.queued_at END
                """
        ).execute(arguments: [
            id.zoneID.ownerName, id.zoneID.zoneName, id.recordName, operation.rawValue, recordType, version,
            sequence, try ancestor.map { try JSONEncoder().encode($0) }, AssetFiles.fileList(in: [ancestor]),
            keepingSentCopies, restartingTime,
        ])
        try noteChanged(queueTable, in: db)
    }

    /// Notes that changes are about to be sent, before the request leaves: from then on the server may have them,
    /// so each save's copy joins the copies sent without an answer.
    static func markSent(_ uploads: [Upload], in db: Database) throws {
        for upload in uploads {
            let id = upload.entry.id
            let arguments: StatementArguments = [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName]
            guard let record = upload.record, let entry = try outboxEntry(id, in: db) else {
                try db.cachedStatement(
                    sql: "UPDATE ncs_outbox SET sent = 1 WHERE zone_owner = ? AND zone_name = ? AND record_name = ?"
                ).execute(arguments: arguments)
                continue
            }
            var copies = entry.sentCopies
            if !entry.isSentCopy(record) { copies.append(record) }
            copies = Array(copies.suffix(OutboxEntry.maximumSentCopies))
            try db.cachedStatement(
                sql: """
                    UPDATE ncs_outbox SET sent = 1, sent_copies = ?, sent_files = ?
                    WHERE zone_owner = ? AND zone_name = ? AND record_name = ?
                    """
            ).execute(arguments: [try JSONEncoder().encode(copies), AssetFiles.fileList(in: copies)] + arguments)
        }
        // The queue's observers show whether a change was sent (`PendingChange.wasSent`).
        try noteChanged(queueTable, in: db)
    }

    static func dequeue(_ id: CloudRecord.ID, in db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM ncs_outbox WHERE zone_owner = ? AND zone_name = ? AND record_name = ?")
            .execute(arguments: [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName])
        try noteChanged(queueTable, in: db)
    }

    static func recordFailure(_ id: CloudRecord.ID, error: String, halt: Bool, in db: Database) throws {
        try db.cachedStatement(
            sql: """
                UPDATE ncs_outbox SET failures = failures + 1, last_error = ?, halted = ?
                WHERE zone_owner = ? AND zone_name = ? AND record_name = ?
                """
        ).execute(arguments: [error, halt, id.zoneID.ownerName, id.zoneID.zoneName, id.recordName])
        try noteChanged(queueTable, in: db)
    }

    /// The tables whose changes the ledger's `observeQueueState()` follows.
    static let queueTable = "ncs_outbox"
    static let skippedTable = "ncs_skipped"
    static let stateTable = "ncs_state"

    /// Tells the store's observations that a table changed. The engine's tables are `WITHOUT ROWID` (their rows are
    /// found by their keys), and SQLite's update hook, which GRDB's observations rely on, says nothing of changes
    /// to such tables: each write to them notes it here, so that an observation of the queue (what a view shows as
    /// pending changes) follows.
    static func noteChanged(_ table: String, in db: Database) throws {
        try db.notifyChanges(in: Table(table))
    }

    /// Notes, in the transaction that makes it, that the app changed something the server should get: the key
    /// `localChange` takes a number never used before, and an engine in automatic mode, which observes it
    /// (``SyncLedger/localChanges()``), syncs. The engine's own writes never note one, so its uploads don't wake it.
    static func noteLocalChange(in db: Database) throws {
        let number = try nextCounter(in: db)
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO ncs_state (key, value) VALUES ('localChange', ?)")
            .execute(arguments: [number])
        try noteChanged(stateTable, in: db)
    }

    // MARK: State

    static func state(_ key: String, in db: Database) throws -> Data? {
        try Data.fetchOne(try db.cachedStatement(sql: "SELECT value FROM ncs_state WHERE key = ?"), arguments: [key])
    }

    static func setState(_ key: String, _ value: Data?, in db: Database) throws {
        if let value {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO ncs_state (key, value) VALUES (?, ?)").execute(
                arguments: [key, value])
        } else {
            try db.cachedStatement(sql: "DELETE FROM ncs_state WHERE key = ?").execute(arguments: [key])
        }
        try noteChanged(stateTable, in: db)
    }

    /// A number never handed out before in this store: versions and the outbox's order. One statement, as it runs
    /// for every write.
    static func nextCounter(in db: Database) throws -> Int64 {
        let next = try Int64.fetchOne(
            try db.cachedStatement(
                sql: """
                    INSERT INTO ncs_state (key, value) VALUES ('counter', 1)
                    ON CONFLICT (key) DO UPDATE SET value = value + 1 RETURNING value
                    """))
        guard let next else { throw SyncError.store("the store's counter is missing") }
        return next
    }
}
