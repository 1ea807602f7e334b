import GRDB
import NestedCloudKitCodable

extension SyncStore {
    /// The records the server changed that a fetch couldn't apply, and why; see ``SkippedRecord``.
    public func skippedRecords() async throws -> [SkippedRecord] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM ncs_skipped ORDER BY zone_name, zone_owner, record_name"
            ).map { row in
                SkippedRecord(
                    recordID: CloudRecord.ID(
                        recordName: row["record_name"],
                        zoneID: CloudRecord.ZoneID(zoneName: row["zone_name"], ownerName: row["zone_owner"])),
                    reason: row["reason"])
            }
        }
    }
}
