import Foundation
import GRDB
import NestedCloudKitCodable

// The queue of changes the server doesn't have yet, as an app shows it on a debug screen and acts on it: listed,
// observed, a halted change asked for again, the whole queue exported for a support request. Discarding a change
// needs the server's copy, so it is the engine's (``SyncEngine/discardPendingChange(_:)``).

extension SyncStore {
    /// The changes the server doesn't have yet, in the order they were first made.
    public func pendingChanges() async throws -> [PendingChange] {
        try await read { db in try Self.pendingChanges(in: db) }
    }

    /// The changes the server doesn't have yet, now and after every transaction that changes the queue or a queued
    /// record (a save, an upload's answer, a halt, a retry, a discard); an equal list isn't delivered twice. What
    /// ``ObservedPendingChanges`` shows a view.
    public func observePendingChanges() -> StoreObservation<[PendingChange]> {
        StoreObservation(writer: writer, removingDuplicates: { $0 == $1 }) { db in try Self.pendingChanges(in: db) }
    }

    /// Makes one halted change eligible again, after the app fixed what its ``PendingChange/lastError`` says, and
    /// has the next sync fetch the record again if a fetch skipped it.
    ///
    /// - Returns: Whether the record had a halted change or a skipped server copy.
    @discardableResult
    public func retryHaltedChange(_ id: CloudRecord.ID) async throws -> Bool {
        try await write { db in
            let arguments: StatementArguments = [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName]
            try db.execute(
                sql: """
                    UPDATE ncs_outbox SET halted = 0, failures = 0
                    WHERE halted = 1 AND zone_owner = ? AND zone_name = ? AND record_name = ?
                    """, arguments: arguments)
            var changed = db.changesCount > 0
            try db.execute(
                sql: """
                    UPDATE ncs_skipped SET retry = 1
                    WHERE retry = 0 AND zone_owner = ? AND zone_name = ? AND record_name = ?
                    """, arguments: arguments)
            changed = changed || db.changesCount > 0
            guard changed else { return false }
            try StoreTables.noteChanged(StoreTables.queueTable, in: db)
            try StoreTables.noteLocalChange(in: db)
            return true
        }
    }

    /// Makes halted uploads eligible again, after the app fixed what their ``PendingChange/lastError`` says, and has
    /// the next sync fetch the ``skippedRecords()`` again.
    public func retryHaltedChanges() async throws {
        try await write { db in
            try db.execute(sql: "UPDATE ncs_outbox SET halted = 0, failures = 0")
            try db.execute(sql: "UPDATE ncs_skipped SET retry = 1")
            try StoreTables.noteChanged(StoreTables.queueTable, in: db)
            try StoreTables.noteLocalChange(in: db)
        }
    }

    /// The queue as JSON, for a support request: ``pendingChanges()`` as an array in their order, each change with
    /// the keys of ``PendingChange`` (`recordID` as `recordName` and `zoneID`, itself `zoneName` and `ownerName`;
    /// `queuedAt` in seconds since 1970), sorted, pretty-printed. It holds record names and types, attempts and
    /// sizes, never a field's value: ``PendingChange/lastError`` is left out, since a server's words may quote one.
    public func exportPendingChanges() async throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .secondsSince1970
        var changes = try await pendingChanges()
        for index in changes.indices { changes[index].lastError = nil }
        return try encoder.encode(changes)
    }

    static func pendingChanges(in db: Database) throws -> [PendingChange] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT o.*, r.record AS queued_record FROM ncs_outbox o
                LEFT JOIN ncs_record r ON o.operation = 'save' AND r.zone_owner = o.zone_owner
                    AND r.zone_name = o.zone_name AND r.record_name = o.record_name
                ORDER BY o.sequence
                """
        ).map { row in
            PendingChange(
                try StoreTables.outboxEntry(row),
                queuedAt: (row["queued_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
                record: try (row["queued_record"] as Data?).map { try RecordCoding.decode($0) })
        }
    }
}
