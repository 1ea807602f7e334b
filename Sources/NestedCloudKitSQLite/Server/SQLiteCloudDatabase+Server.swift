import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer

// What a SQLiteCloudServer asks of the files it keeps: whose each file is, and a shared database's copy of what
// others share.

extension SQLiteCloudDatabase {
    /// Whose database a file of a ``SQLiteCloudServer`` is: stored in the file, so that a server finds its users'
    /// files again whatever their names.
    struct ServerStamp: Hashable, Sendable {
        var userRecordName: String
        var scope: CloudNotification.DatabaseScope
    }

    /// The stamp of a server's file, or `nil` for a file no server made.
    func serverStamp() throws -> ServerStamp? {
        try readNow { database in
            let values = try Row.fetchAll(
                database,
                sql: "SELECT key, value FROM text_metadata WHERE key IN ('server_user', 'server_scope')"
            )
            .reduce(into: [String: String]()) { $0[$1[0]] = $1[1] }
            guard let user = values["server_user"], let scope = values["server_scope"] else { return nil }
            switch scope {
            case "private": return ServerStamp(userRecordName: user, scope: .private)
            case "shared": return ServerStamp(userRecordName: user, scope: .shared)
            default: return nil
            }
        }
    }

    /// Prepares a server's file: the index of parents the server reads (``Schema/addParentIndex(_:)``).
    func prepareForServer() throws {
        try writeNow { try Schema.addParentIndex($0) }
    }

    /// Marks the file as `stamp`'s database; its user record name becomes theirs. A shared database has no
    /// default zone, and no zone of its own: it shows only zones others share.
    func stamp(_ stamp: ServerStamp) throws {
        try writeNow { database in
            try database.execute(
                sql: """
                    INSERT OR REPLACE INTO text_metadata (key, value) VALUES ('server_user', ?), ('server_scope', ?),
                        ('user_record_name', ?)
                    """,
                arguments: [stamp.userRecordName, stamp.scope == .shared ? "shared" : "private", stamp.userRecordName])
            // A shared database shows only what the shares its user accepted cover: a file made before it was a
            // server's (an earlier emulator's `shared` file, where zones could be made) starts empty, its zones
            // deleted as a client sees a zone it lost.
            if stamp.scope == .shared {
                let zones = try Row.fetchAll(database, sql: "SELECT zone_name, owner_name FROM zone")
                    .map { CloudRecord.ZoneID(zoneName: $0[0], ownerName: $0[1]) }
                try database.execute(sql: "DELETE FROM zone")
                let log = SQLiteChangeLog(database: database)
                for zone in zones where zone != .default { try log.logZoneDeleted(zone, reason: .deleted) }
            }
        }
    }

    /// Makes a zone of this shared database hold exactly the records named `visible`, as another user's database
    /// has them (their change tags and dates kept), logging what changed: the zone appears with its first record and
    /// is deleted with its last, as CloudKit reports gaining and losing access.
    ///
    /// - Parameters:
    ///   - visible: The names of every record the zone shows.
    ///   - written: The records among them that are new or changed here.
    ///   - contents: The contents of the assets of `written`.
    /// - Returns: Whether anything changed.
    func show(
        _ visible: Set<String>, writing written: [CloudRecord], in zone: CloudRecord.ZoneID,
        contents: [AssetKey: Data], now: Date
    ) throws -> Bool {
        let assets = assets
        let (changed, deletedRows) = try writeNow { database -> (Bool, [Int64]) in
            let store = SQLiteRecordStore(database: database, assets: assets)
            let shown = try store.containsZone(zone)
            if visible.isEmpty {
                guard shown else { return (false, []) }
                return (true, try Self.removeZone(zone, in: database))
            }
            if !shown {
                try Self.showZone(zone, in: database)
            }
            let tags = try store.changeTags(in: zone)
            let removed = try tags.keys.filter { !visible.contains($0) }.sorted().compactMap { name in
                let id = CloudRecord.ID(recordName: name, zoneID: zone)
                return try store.storedRecord(withID: id).map { (id: id, recordType: $0["record_type"] as String) }
            }
            guard !shown || !written.isEmpty || !removed.isEmpty else { return (false, []) }
            var transaction = try ModifyTransaction(store: store, now: now)
            try transaction.write(written, removed: removed, contents: contents, asCopy: true)
            try transaction.finish(keepingTombstones: maximumTombstones)
            return (true, transaction.deletedRows)
        }
        assets.removeFiles(ofRows: deletedRows)
        return changed
    }

    /// Writes and removes some records of a zone of this shared database, as another user's database has them,
    /// logging what changed: the zone appears with its first record and is deleted with its last.
    ///
    /// - Parameters:
    ///   - written: Records the zone shows now, written where their change tag differs.
    ///   - removed: Names of records the zone no longer shows, removed where it has them.
    ///   - contents: The contents of the assets of `written`.
    /// - Returns: Whether anything changed, and whether the zone is shown afterwards.
    func update(
        writing written: [CloudRecord], removing removed: Set<String>, in zone: CloudRecord.ZoneID,
        contents: [AssetKey: Data], now: Date
    ) throws -> (changed: Bool, shown: Bool) {
        let assets = assets
        let (result, deletedRows) = try writeNow { database -> ((Bool, Bool), [Int64]) in
            let store = SQLiteRecordStore(database: database, assets: assets)
            let shown = try store.containsZone(zone)
            if !shown {
                guard !written.isEmpty else { return ((false, false), []) }
                try Self.showZone(zone, in: database)
            }
            let changed = try written.filter { record in
                try store.storedRecord(withID: record.id)?["change_tag"] != record.systemFields?.changeTag
            }
            let gone = try removed.sorted().compactMap { name in
                let id = CloudRecord.ID(recordName: name, zoneID: zone)
                return try store.storedRecord(withID: id).map { (id: id, recordType: $0["record_type"] as String) }
            }
            guard !changed.isEmpty || !gone.isEmpty else { return ((!shown, true), []) }
            var transaction = try ModifyTransaction(store: store, now: now)
            try transaction.write(changed, removed: gone, contents: contents, asCopy: true)
            try transaction.finish(keepingTombstones: maximumTombstones)
            var rows = transaction.deletedRows
            // A zone left without a record is one the user no longer sees anything of.
            let empty =
                try Bool.fetchOne(
                    database, sql: "SELECT NOT EXISTS (SELECT 1 FROM record WHERE zone_name = ? AND owner_name = ?)",
                    arguments: [zone.zoneName, zone.ownerName]) ?? false
            guard empty else { return ((true, true), rows) }
            rows += try Self.removeZone(zone, in: database)
            return ((true, false), rows)
        }
        assets.removeFiles(ofRows: deletedRows)
        return result
    }

    /// Adds a zone to a shared database, logged as a zone created: the user sees something of it now.
    private static func showZone(_ zone: CloudRecord.ZoneID, in database: Database) throws {
        try database.execute(
            sql: "INSERT INTO zone (zone_name, owner_name) VALUES (?, ?)", arguments: [zone.zoneName, zone.ownerName])
        try SQLiteChangeLog(database: database).logZoneCreated(zone)
    }

    /// Removes a zone and its records from a shared database, logged as a zone deleted: the user sees nothing of it
    /// any more. Returns the rows of its records, whose asset files can go.
    private static func removeZone(_ zone: CloudRecord.ZoneID, in database: Database) throws -> [Int64] {
        let rows = try Int64.fetchAll(
            database, sql: "SELECT id FROM record WHERE zone_name = ? AND owner_name = ?",
            arguments: [zone.zoneName, zone.ownerName])
        try database.execute(
            sql: "DELETE FROM zone WHERE zone_name = ? AND owner_name = ?", arguments: [zone.zoneName, zone.ownerName])
        try SQLiteChangeLog(database: database).logZoneDeleted(zone, reason: .deleted)
        return rows
    }
}
