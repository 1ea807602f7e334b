import GRDB
import NestedCloudKitCodable

/// Reads the records a decoder asks for a level of a graph at a time, by following the references of the records
/// it read the level before through their rows.
///
/// A level's records are nearly always what the level before references: the files of the folders just read. Each
/// reference row holds its holder's row and its target's (``StoreSchema``), so one statement reads them by row
/// number, in the order of the table, for every holder of the level at once: an integer lookup per holder instead of
/// a lookup by three names per target. When the references don't lead to every record asked for (a record
/// another path of the graph reached, a record the store doesn't have), the level is read by name, as
/// ``StoreTables/readRecords(_:in:receive:)`` reads any ID.
///
/// One per read of models, used inside the read's transaction; not shared between threads.
final class StoreGraphReader {
    private let db: Database
    /// The rows of the records the last level read (the roots' rows at first): the holders of the references the
    /// next level follows.
    private var holders: [Int64]

    init(roots: [Int64], in db: Database) {
        self.db = db
        self.holders = roots
    }

    /// Reads the records with these IDs the store has for a decoder's `receive`, which takes those asked for and
    /// says so (``CKRecordDecoder/RecordFetch``).
    func read(_ ids: [CloudRecord.ID], receive: (consuming CloudRecord) -> Bool) throws {
        var read: [Int64] = []
        read.reserveCapacity(ids.count)
        if !holders.isEmpty {
            try readTargets(of: holders) { record, row in
                if receive(record) { read.append(row) }
            }
        }
        // Nearly always every one of them. If not, all by name: `receive` drops those it has.
        if read.count < ids.count {
            try StoreTables.readRecords(ids, in: db) { record, row in
                if receive(record) { read.append(row) }
            }
        }
        holders = read
    }

    /// Every record the holders reference, each once.
    private func readTargets(of holders: [Int64], receive: (consuming CloudRecord, _ row: Int64) -> Void) throws {
        let shared = RecordCoding.SharedStrings()
        try RowNumbers.forEach(holders, in: db, sql: Self.targetsSQL) { row, _ in
            receive(try RecordCoding.decode(row, column: 0, sharing: shared), row[1])
        }
    }

    /// The targets as a set of rows, so each is read once, in the order of the table.
    private static func targetsSQL(_ holders: String) -> String {
        "SELECT record, rowid FROM ncs_record WHERE rowid IN "
            + "(SELECT target_row FROM ncs_reference WHERE holder_row IN \(holders))"
    }
}
