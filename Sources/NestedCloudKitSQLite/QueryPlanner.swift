import GRDB
import NestedCloudKitCodable

/// Finds the records that match a query: from the reference index when the query asks for the holders of a
/// reference, from the record type's index otherwise; every candidate is then checked against the whole predicate.
struct QueryPlanner {
    let transaction: SQLiteTransaction

    private static let columns = """
        record.id, record.zone_name, record.owner_name, record.record_name, record.record_type, record.change_tag,
        record.created_at, record.created_by, record.modified_at, record.modified_by, record.body
        """

    func records(matching query: CloudQuery, in zone: CloudRecord.ZoneID) throws -> [(row: Row, record: CloudRecord)] {
        let rows: [Row]
        if let (target, field) = Self.referenceCondition(in: query.predicate) {
            rows = try Row.fetchAll(
                transaction.database,
                sql: """
                    SELECT DISTINCT \(Self.columns) FROM reference JOIN record ON record.id = reference.holder
                    WHERE reference.target_zone = ? AND reference.target_owner = ? AND reference.target_name = ?
                        AND reference.field = ? AND record.zone_name = ? AND record.owner_name = ? AND record.record_type = ?
                    """,
                arguments: [
                    target.zoneID.zoneName, target.zoneID.ownerName, target.recordName, field,
                    zone.zoneName, zone.ownerName, query.recordType,
                ])
        } else if let modifiedSince = Self.modificationLowerBound(in: query.predicate) {
            // "Modified since": a range of the modification index, so a client syncing by date reads only what
            // changed.
            rows = try Row.fetchAll(
                transaction.database,
                sql: """
                    SELECT \(Self.columns) FROM record
                    WHERE zone_name = ? AND owner_name = ? AND modified_at >= ? AND record_type = ?
                    """, arguments: [zone.zoneName, zone.ownerName, modifiedSince, query.recordType])
        } else {
            rows = try Row.fetchAll(
                transaction.database,
                sql: """
                    SELECT \(Self.columns) FROM record WHERE zone_name = ? AND owner_name = ? AND record_type = ?
                    """, arguments: [zone.zoneName, zone.ownerName, query.recordType])
        }
        return try rows.compactMap { row in
            let id = CloudRecord.ID(
                recordName: row["record_name"],
                zoneID: CloudRecord.ZoneID(zoneName: row["zone_name"], ownerName: row["owner_name"]))
            let record = try transaction.decode(row, id: id, withAssets: false)
            return query.predicate.matches(record) ? (row, record) : nil
        }
    }

    /// A "references this record" condition that every match must meet, if the predicate has one.
    private static func referenceCondition(in predicate: CloudQuery.Predicate) -> (CloudRecord.ID, String)? {
        switch predicate {
        case .references(let target, let field): return (target, field)
        case .equals(let field, .reference(let reference)),
            .compare(let field, .equals, .reference(let reference)),
            .compare(let field, .listContains, .reference(let reference)):
            return CloudQuery.SystemField(fieldName: field) == nil ? (reference.recordID, field) : nil
        case .and(let predicates): return predicates.lazy.compactMap(referenceCondition).first
        case .all, .equals, .compare, .near: return nil
        }
    }

    /// The stored milliseconds at or above which every match's modification date lies, if the predicate bounds it
    /// from below. A little below the exact bound: the whole predicate is checked on each candidate afterwards.
    private static func modificationLowerBound(in predicate: CloudQuery.Predicate) -> Int64? {
        switch predicate {
        case .compare(let field, .greaterThan, .date(let date)),
            .compare(let field, .greaterThanOrEquals, .date(let date)):
            guard field == CloudQuery.SystemField.modificationDate.fieldName else { return nil }
            let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
            guard milliseconds.isFinite, abs(milliseconds) < 9e15 else { return nil }
            return Int64(milliseconds) - 1
        case .and(let predicates):
            return predicates.lazy.compactMap(modificationLowerBound).first
        case .all, .equals, .references, .compare, .near:
            return nil
        }
    }
}
