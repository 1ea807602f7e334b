import GRDB
import NestedCloudKitCodable

extension SyncLedger {
    /// The skipped records the app asked for again (``SyncStore/retryHaltedChanges()``), to fetch by ID.
    func skippedRecordsToFetch() async throws -> [CloudRecord.ID] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM ncs_skipped WHERE retry = 1 ORDER BY record_name").map { row in
                CloudRecord.ID(
                    recordName: row["record_name"],
                    zoneID: CloudRecord.ZoneID(zoneName: row["zone_name"], ownerName: row["zone_owner"]))
            }
        }
    }

    /// Lists a record a fetch couldn't apply, asked for again only when the app says so, and halts a pending change
    /// of it: the change was made over a copy the server no longer has, and sent now it would land on a newer one
    /// this device never read. A later save of the record stays halted too while it is listed
    /// (``StoreTables/enqueue(_:id:recordType:version:ancestor:keepingSentCopies:in:)``).
    static func skip(_ id: CloudRecord.ID, reason: String, in db: Database) throws {
        let arguments: StatementArguments = [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName, reason]
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO ncs_skipped (zone_owner, zone_name, record_name, reason, retry)
                VALUES (?, ?, ?, ?, 0)
                """
        ).execute(arguments: arguments)
        try db.cachedStatement(
            sql: """
                UPDATE ncs_outbox SET halted = 1, last_error = ?4
                WHERE zone_owner = ?1 AND zone_name = ?2 AND record_name = ?3
                """
        ).execute(arguments: arguments)
        try StoreTables.noteChanged(StoreTables.skippedTable, in: db)
        try StoreTables.noteChanged(StoreTables.queueTable, in: db)
    }

    /// A record applied after all is no longer skipped.
    static func unskip(_ id: CloudRecord.ID, in db: Database) throws {
        try db.cachedStatement(
            sql: "DELETE FROM ncs_skipped WHERE zone_owner = ? AND zone_name = ? AND record_name = ?"
        ).execute(arguments: [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName])
        try StoreTables.noteChanged(StoreTables.skippedTable, in: db)
    }
}
