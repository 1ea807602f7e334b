import Foundation
import GRDB
import NestedCloudKitCodable

/// The database file's layout, its version, and the checks that keep this library from writing to a file that
/// isn't its own.
enum Schema {
    /// `PRAGMA application_id`: "NCKC", marking the file as this library's.
    static let applicationID: Int32 = 0x4E43_4B43

    /// `PRAGMA user_version`: the schema version this library writes. Later versions migrate from it.
    static let currentVersion = 1

    /// Creates the schema in a new file, after checking that the file is new or this library's.
    static func prepare(_ database: Database, path: String) throws {
        if try check(database, path: path) == .new { try create(database) }
    }

    enum State { case new, current }

    /// Whether the file is new (empty) or this library's, in a version it reads; any other file is an
    /// ``SQLiteCloudDatabase/OpenError``. Reads only.
    @discardableResult
    static func check(_ database: Database, path: String) throws -> State {
        let applicationID = try Int32.fetchOne(database, sql: "PRAGMA application_id") ?? 0
        let version = try Int.fetchOne(database, sql: "PRAGMA user_version") ?? 0
        let tableCount = try Int.fetchOne(database, sql: "SELECT count(*) FROM sqlite_master") ?? 0
        if applicationID == 0 && version == 0 && tableCount == 0 { return .new }
        guard applicationID == Self.applicationID else {
            throw SQLiteCloudDatabase.OpenError.foreignDatabase(path: path)
        }
        guard version <= currentVersion else {
            throw SQLiteCloudDatabase.OpenError.unsupportedSchemaVersion(
                path: path, found: version, supported: currentVersion)
        }
        return .current
    }

    private static func create(_ database: Database) throws {
        try database.execute(
            sql: """
                CREATE TABLE zone (
                    zone_name TEXT NOT NULL,
                    owner_name TEXT NOT NULL,
                    PRIMARY KEY (zone_name, owner_name)
                ) WITHOUT ROWID;

                CREATE TABLE record (
                    id INTEGER PRIMARY KEY,
                    zone_name TEXT NOT NULL,
                    owner_name TEXT NOT NULL,
                    record_name TEXT NOT NULL,
                    record_type TEXT NOT NULL,
                    change_tag TEXT NOT NULL,
                    created_at INTEGER,
                    created_by TEXT,
                    modified_at INTEGER,
                    modified_by TEXT,
                    body TEXT NOT NULL,
                    UNIQUE (zone_name, owner_name, record_name),
                    FOREIGN KEY (zone_name, owner_name) REFERENCES zone ON DELETE CASCADE
                );
                CREATE INDEX record_by_type ON record (zone_name, owner_name, record_type);

                -- Every reference a record holds, so that deletes cascade and queries find holders from an index.
                CREATE TABLE reference (
                    holder INTEGER NOT NULL REFERENCES record (id) ON DELETE CASCADE,
                    field TEXT NOT NULL,
                    target_zone TEXT NOT NULL,
                    target_owner TEXT NOT NULL,
                    target_name TEXT NOT NULL,
                    action TEXT NOT NULL
                );
                CREATE INDEX reference_by_target ON reference (target_zone, target_owner, target_name, field);
                CREATE INDEX reference_by_holder ON reference (holder);

                -- Asset contents, saved with their record in one transaction and deleted with it.
                CREATE TABLE asset (
                    record_id INTEGER NOT NULL REFERENCES record (id) ON DELETE CASCADE,
                    field TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    content BLOB NOT NULL,
                    PRIMARY KEY (record_id, field, position)
                );

                -- Earlier versions of each record, for the ancestor of a conflict.
                CREATE TABLE record_version (
                    record_id INTEGER NOT NULL REFERENCES record (id) ON DELETE CASCADE,
                    change_tag TEXT NOT NULL,
                    record_type TEXT NOT NULL,
                    created_at INTEGER,
                    created_by TEXT,
                    modified_at INTEGER,
                    modified_by TEXT,
                    body TEXT NOT NULL
                );
                CREATE INDEX record_version_by_record ON record_version (record_id, change_tag);

                CREATE TABLE metadata (
                    key TEXT PRIMARY KEY NOT NULL,
                    value INTEGER NOT NULL
                );
                INSERT INTO metadata (key, value) VALUES ('change_counter', 0);
                """)
        try database.execute(
            sql: "INSERT INTO zone (zone_name, owner_name) VALUES (?, ?)",
            arguments: [CloudRecord.ZoneID.default.zoneName, CloudRecord.ZoneID.default.ownerName]
        )
        try database.execute(sql: "PRAGMA application_id = \(applicationID)")
        try database.execute(sql: "PRAGMA user_version = \(currentVersion)")
    }
}
