import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer

/// One write transaction of a ``SQLiteCloudDatabase`` that applies modify requests under CloudKit's rules: the
/// plan of each, its rows, its change tags and its change log, all committed together.
struct ModifyTransaction {
    let store: SQLiteRecordStore
    let now: Date
    /// The last change tag given; each new one counts up from the file's counter.
    private var counter: Int
    /// The rows of the records deleted, whose asset files can go once the transaction commits.
    private(set) var deletedRows: [Int64] = []
    private var removedAny = false
    /// How the transaction changed each zone, kept only for a server of several users (`tracksZoneChanges`).
    private(set) var zoneChanges: [CloudRecord.ZoneID: SharedZoneChange] = [:]
    private let tracksZoneChanges: Bool

    init(store: SQLiteRecordStore, now: Date, tracksZoneChanges: Bool = false) throws {
        self.store = store
        self.now = now
        self.tracksZoneChanges = tracksZoneChanges
        counter =
            try Int.fetchOne(store.database, sql: "SELECT value FROM metadata WHERE key = 'change_counter'") ?? 0
    }

    /// A change tag no record of the file had.
    mutating func nextChangeTag() -> String {
        counter += 1
        return String(counter, radix: 36)
    }

    /// Plans a modify request made by `user` and writes it, with its change log; returns its results.
    mutating func apply(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError],
        contents: [AssetKey: Data], madeBy user: String
    ) throws -> CloudModifyResults {
        var counter = self.counter
        let plan = try CloudModificationPlan(
            operations, atomically: atomically, store: store, failures: failures, now: now, userRecordName: user
        ) {
            counter += 1
            return String(counter, radix: 36)
        }
        self.counter = counter
        let removed = try plan.recordIDsToRemove.compactMap { id in
            try store.storedRecord(withID: id).map { (id: id, recordType: $0["record_type"] as String) }
        }
        try write(plan.recordsToWrite, removed: removed, contents: contents)
        return (plan.saveResults, plan.deleteResults)
    }

    /// Writes records as they are (their change tags given by ``nextChangeTag()`` or copied from elsewhere) and
    /// removes others, with the change log.
    ///
    /// - Parameter asCopy: Whether the records are a copy of another file's (a server's shared database), which
    ///   keeps no earlier versions.
    mutating func write(
        _ records: [CloudRecord], removed: [(id: CloudRecord.ID, recordType: String)], contents: [AssetKey: Data],
        asCopy: Bool = false
    ) throws {
        if tracksZoneChanges {
            try SharedZoneChange.track(writing: records, removing: removed.map(\.id), in: store, into: &zoneChanges)
        }
        deletedRows += try store.write(
            records, removing: removed.map(\.id), contents: contents, keepingVersions: !asCopy)
        try SQLiteChangeLog(database: store.database).logRecordChanges(written: records.map(\.id), removed: removed)
        removedAny = removedAny || !removed.isEmpty
    }

    /// Stores the change tag counter and compacts the log if records were deleted.
    func finish(keepingTombstones maximumTombstones: Int) throws {
        try store.database.execute(
            sql: "UPDATE metadata SET value = ? WHERE key = 'change_counter'", arguments: [counter])
        if removedAny { try SQLiteChangeLog(database: store.database).compact(keepingTombstones: maximumTombstones) }
    }
}
