import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer

// What a file keeps about itself: its user, whose database of a server it is, and its change log's size.

extension SQLiteFile {
    /// The file's own user: a record name made when the file was created, the same every time it is opened; a
    /// server's file is its user's.
    func userRecordName() async throws -> String {
        try await read { transaction in
            try String.fetchOne(
                transaction.database, sql: "SELECT value FROM text_metadata WHERE key = 'user_record_name'")
                ?? "_defaultUser"
        }
    }

    /// Whose database a file of a ``SQLiteCloudServer`` is: stored in the file, so that a server finds its users'
    /// files again whatever their names.
    typealias ServerStamp = UserDatabaseID

    /// The stamp of a server's file, or `nil` for a file no server made.
    func serverStamp() throws -> ServerStamp? {
        try readRaw { database in
            let values = try Row.fetchAll(
                database,
                sql: "SELECT key, value FROM text_metadata WHERE key IN ('server_user', 'server_scope')"
            )
            .reduce(into: [String: String]()) { $0[$1[0]] = $1[1] }
            guard let user = values["server_user"], let scope = values["server_scope"] else { return nil }
            switch scope {
            case "private": return .privateDatabase(of: user)
            case "shared": return .sharedDatabase(of: user)
            default: return nil
            }
        }
    }

    /// Prepares a server's file: the index of parents the server reads (``Schema/addParentIndex(_:)``).
    func prepareForServer() throws {
        try writeRaw { try Schema.addParentIndex($0) }
    }

    /// Marks the file as `stamp`'s database; its user record name becomes theirs. A shared database has no
    /// default zone, and no zone of its own: it shows only zones others share.
    func stamp(_ stamp: ServerStamp) throws {
        try writeRaw { database in
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
}
