import Foundation
import GRDB
import NestedCloudKitCodable

/// The change log of a SQLite database file, read and written inside the transaction of the request it belongs to,
/// so a change and its log entry are committed together or not at all.
///
/// Each record row carries the sequence number of its latest change, and a deleted record leaves a tombstone, so
/// the changes since a token are an index range (`record_by_change`, `record_tombstone_by_seq`): reading them costs
/// the changes, never the size of the zone. Tombstones are compacted away past a bound; a token older than a
/// zone's compaction horizon is expired, as CloudKit expires old tokens.
struct SQLiteChangeLog {
    let database: Database

    /// A zone's row in the log.
    struct Zone {
        var generation: Int
        var startSequence: Int
        var lastSequence: Int
        var horizon: Int
    }

    // MARK: Writing

    /// Takes the next sequence number.
    func nextSequence() throws -> Int {
        try database.execute(sql: "UPDATE metadata SET value = value + 1 WHERE key = 'change_sequence'")
        return try Int.fetchOne(database, sql: "SELECT value FROM metadata WHERE key = 'change_sequence'") ?? 0
    }

    /// Takes the next zone generation.
    func nextGeneration() throws -> Int {
        try database.execute(sql: "UPDATE metadata SET value = value + 1 WHERE key = 'next_generation'")
        return try Int.fetchOne(database, sql: "SELECT value FROM metadata WHERE key = 'next_generation'") ?? 0
    }

    /// Logs the records a modify request wrote and removed, in order.
    ///
    /// The sequence counter is read and written once per request, and tombstones are looked for only in zones
    /// that have some: a large save costs one extra statement per record.
    func logRecordChanges(written: [CloudRecord.ID], removed: [(id: CloudRecord.ID, recordType: String)]) throws {
        guard !written.isEmpty || !removed.isEmpty else { return }
        var sequence =
            try Int.fetchOne(database, sql: "SELECT value FROM metadata WHERE key = 'change_sequence'") ?? 0
        var lastChange: [CloudRecord.ZoneID: Int] = [:]
        var zonesWithTombstones: [CloudRecord.ZoneID: Bool] = [:]
        let setSequence = try database.cachedStatement(
            sql: "UPDATE record SET change_seq = ? WHERE zone_name = ? AND owner_name = ? AND record_name = ?")
        for id in written {
            sequence += 1
            try setSequence.execute(arguments: [sequence, id.zoneID.zoneName, id.zoneID.ownerName, id.recordName])
            lastChange[id.zoneID] = sequence
            let hasTombstones =
                try zonesWithTombstones[id.zoneID]
                ?? {
                    let found =
                        try Bool.fetchOne(
                            database,
                            sql:
                                "SELECT EXISTS (SELECT 1 FROM record_tombstone WHERE zone_name = ? AND owner_name = ?)",
                            arguments: [id.zoneID.zoneName, id.zoneID.ownerName]) ?? false
                    zonesWithTombstones[id.zoneID] = found
                    return found
                }()
            if hasTombstones {
                // A record saved again is no longer deleted: its tombstone would report it gone.
                try database.execute(
                    sql: "DELETE FROM record_tombstone WHERE zone_name = ? AND owner_name = ? AND record_name = ?",
                    arguments: [id.zoneID.zoneName, id.zoneID.ownerName, id.recordName])
            }
        }
        for (id, recordType) in removed where id.zoneID != .default {
            sequence += 1
            try database.execute(
                sql: """
                    INSERT OR REPLACE INTO record_tombstone (zone_name, owner_name, record_name, record_type, seq)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: [id.zoneID.zoneName, id.zoneID.ownerName, id.recordName, recordType, sequence])
            lastChange[id.zoneID] = sequence
        }
        try database.execute(
            sql: "UPDATE metadata SET value = ? WHERE key = 'change_sequence'", arguments: [sequence])
        for (zone, sequence) in lastChange where zone != .default {
            // The zone's latest change: what its tokens cover, and what orders it among the database's changes.
            try database.execute(
                sql: "UPDATE zone SET change_seq = ? WHERE zone_name = ? AND owner_name = ?",
                arguments: [sequence, zone.zoneName, zone.ownerName])
        }
    }

    /// Logs a zone created: a new generation, starting now. A deletion of the zone before stays in the log, before
    /// the creation: a client that missed it still learns of it (`CloudDatabaseChanges`).
    func logZoneCreated(_ zone: CloudRecord.ZoneID) throws {
        let sequence = try nextSequence()
        try database.execute(
            sql: """
                UPDATE zone SET generation = ?, start_seq = ?, change_seq = ?, horizon_seq = 0
                WHERE zone_name = ? AND owner_name = ?
                """,
            arguments: [try nextGeneration(), sequence, sequence, zone.zoneName, zone.ownerName])
    }

    /// Logs a zone deleted, with why; its record tombstones go with it. A purge supersedes every earlier deletion
    /// of the zone; a later deletion supersedes earlier ones but the purge, which a device must still hear of.
    func logZoneDeleted(_ zone: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason) throws {
        let arguments: StatementArguments = [zone.zoneName, zone.ownerName]
        try database.execute(
            sql: "DELETE FROM record_tombstone WHERE zone_name = ? AND owner_name = ?", arguments: arguments)
        if reason == .purged {
            try database.execute(
                sql: "DELETE FROM zone_tombstone WHERE zone_name = ? AND owner_name = ?", arguments: arguments)
        }
        try database.execute(
            sql: """
                INSERT OR REPLACE INTO zone_tombstone (zone_name, owner_name, purge, reason, seq)
                VALUES (?, ?, ?, ?, ?)
                """,
            arguments: arguments + [reason == .purged, reason.rawValue, try nextSequence()])
    }

    /// Deletes the oldest record tombstones until at most `limit` remain, moving each affected zone's horizon past
    /// the newest tombstone it lost; returns how many were deleted.
    @discardableResult
    func compact(keepingTombstones limit: Int) throws -> Int {
        let count = try Int.fetchOne(database, sql: "SELECT count(*) FROM record_tombstone") ?? 0
        guard count > limit else { return 0 }
        guard
            let cutoff = try Int.fetchOne(
                database, sql: "SELECT seq FROM record_tombstone ORDER BY seq LIMIT 1 OFFSET ?",
                arguments: [count - max(0, limit) - 1])
        else { return 0 }
        try database.execute(
            sql: """
                UPDATE zone SET horizon_seq = max(horizon_seq, (
                    SELECT max(seq) FROM record_tombstone AS t
                    WHERE t.zone_name = zone.zone_name AND t.owner_name = zone.owner_name AND t.seq <= :cutoff))
                WHERE EXISTS (
                    SELECT 1 FROM record_tombstone AS t
                    WHERE t.zone_name = zone.zone_name AND t.owner_name = zone.owner_name AND t.seq <= :cutoff)
                """,
            arguments: ["cutoff": cutoff])
        try database.execute(sql: "DELETE FROM record_tombstone WHERE seq <= ?", arguments: [cutoff])
        return database.changesCount
    }

    // MARK: Reading

    /// A zone's log, or `nil` when the zone doesn't exist.
    func zone(_ zoneID: CloudRecord.ZoneID) throws -> Zone? {
        try Row.fetchOne(
            database,
            sql: """
                SELECT generation, start_seq, change_seq, horizon_seq FROM zone WHERE zone_name = ? AND owner_name = ?
                """,
            arguments: [zoneID.zoneName, zoneID.ownerName]
        ).map { Zone(generation: $0[0], startSequence: $0[1], lastSequence: $0[2], horizon: $0[3]) }
    }

    /// The latest changes of a zone's records after `sequence`, in order, at most `limit`: the row IDs of records
    /// saved and the tombstones of records deleted, with the sequence number a page ending there covers.
    func recordChanges(
        in zoneID: CloudRecord.ZoneID, after sequence: Int, limit: Int, zone: Zone
    ) throws -> (changes: [RecordChange], through: Int, more: Bool) {
        let arguments: StatementArguments = [zoneID.zoneName, zoneID.ownerName, sequence, limit + 1]
        let saved = try Row.fetchAll(
            database,
            sql: """
                SELECT id, record_name, change_seq FROM record
                WHERE zone_name = ? AND owner_name = ? AND change_seq > ? ORDER BY change_seq LIMIT ?
                """,
            arguments: arguments
        ).map { RecordChange(sequence: $0[2], recordName: $0[1], savedRowID: $0[0], deletedRecordType: nil) }
        let deleted = try Row.fetchAll(
            database,
            sql: """
                SELECT record_name, record_type, seq FROM record_tombstone
                WHERE zone_name = ? AND owner_name = ? AND seq > ? ORDER BY seq LIMIT ?
                """,
            arguments: arguments
        ).map { RecordChange(sequence: $0[2], recordName: $0[0], savedRowID: nil, deletedRecordType: $0[1]) }
        let merged = (saved + deleted).sorted { $0.sequence < $1.sequence }
        guard merged.count > limit else { return (merged, max(zone.lastSequence, sequence), false) }
        let page = Array(merged.prefix(limit))
        return (page, page.last?.sequence ?? sequence, true)
    }

    /// One change in a zone's log.
    struct RecordChange {
        var sequence: Int
        var recordName: String
        /// The record's row, when it was saved.
        var savedRowID: Int64?
        /// The record's type, when it was deleted.
        var deletedRecordType: String?
    }

    /// The database's generation and latest change.
    func databaseLog() throws -> (generation: Int, lastSequence: Int) {
        let generation =
            try Int.fetchOne(database, sql: "SELECT value FROM metadata WHERE key = 'database_generation'") ?? 0
        let last = try Int.fetchOne(database, sql: "SELECT value FROM metadata WHERE key = 'change_sequence'") ?? 0
        return (generation, last)
    }

    /// The zones created, changed or deleted after `sequence`, in order, at most `limit`.
    func zoneChanges(
        after sequence: Int, limit: Int
    ) throws -> (changes: [(zoneID: CloudRecord.ZoneID, deletion: CloudZoneDeletion.Reason?)], through: Int, more: Bool)
    {
        let changed = try Row.fetchAll(
            database,
            sql: """
                SELECT zone_name, owner_name, change_seq FROM zone
                WHERE change_seq > ? AND NOT (zone_name = ? AND owner_name = ?) ORDER BY change_seq LIMIT ?
                """,
            arguments: [
                sequence, CloudRecord.ZoneID.default.zoneName, CloudRecord.ZoneID.default.ownerName, limit + 1,
            ]
        ).map {
            (
                sequence: $0[2] as Int, zone: CloudRecord.ZoneID(zoneName: $0[0], ownerName: $0[1]),
                reason: nil as String?
            )
        }
        let deleted = try Row.fetchAll(
            database,
            sql: "SELECT zone_name, owner_name, seq, reason FROM zone_tombstone WHERE seq > ? ORDER BY seq LIMIT ?",
            arguments: [sequence, limit + 1]
        ).map {
            (
                sequence: $0[2] as Int, zone: CloudRecord.ZoneID(zoneName: $0[0], ownerName: $0[1]),
                reason: $0[3] as String?
            )
        }
        let merged = (changed + deleted).sorted { $0.sequence < $1.sequence }
        let page = merged.prefix(limit).map { change in
            // A reason this version doesn't know (a newer library wrote it) reads as a plain deletion.
            (zoneID: change.zone, deletion: change.reason.map { CloudZoneDeletion.Reason(rawValue: $0) ?? .deleted })
        }
        guard merged.count > limit else { return (page, max(try databaseLog().lastSequence, sequence), false) }
        return (page, merged[limit - 1].sequence, true)
    }
}
