import Foundation
import GRDB
import NestedCloudKitCodable

/// The database file's layout, its version, and the checks that keep this library from writing to a file that
/// isn't its own.
enum Schema {
    /// `PRAGMA application_id`: "NCKC", marking the file as this library's.
    static let applicationID: Int32 = 0x4E43_4B43

    /// `PRAGMA user_version`: the schema version this library writes, the number of ``migrator()``'s migrations.
    /// A release that finds a larger one refuses the file rather than write to a layout it doesn't know.
    static let currentVersion = 3

    /// Creates the schema in a new file, or migrates an earlier version's, after checking that the file is new or
    /// this library's.
    static func prepare(_ writer: some DatabaseWriter, path: String) throws {
        try writer.read { try check($0, path: path) }
        try migrator().migrate(writer)
    }

    /// The layouts, oldest first: GRDB records which ones a file has, as the sync store's.
    ///
    /// Files written before the migrator (releases up to 2.0) have no record of their migrations, only
    /// `user_version`; each migration first looks for what it makes, so such a file gets the ones it lacks.
    /// Each migration also sets `user_version`, which earlier releases read to refuse a newer file.
    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: zones, records, references, assets, versions") { database in
            if try !database.tableExists("record") { try create(database) }
            try database.execute(sql: "PRAGMA user_version = 1")
        }
        migrator.registerMigration("v2: change log") { database in
            if try !database.columns(in: "record").contains(where: { $0.name == "change_seq" }) {
                try addChangeLog(database)
            }
            try database.execute(sql: "PRAGMA user_version = 2")
        }
        migrator.registerMigration("v3: a purge kept beside a later deletion of its zone") { database in
            if try !database.columns(in: "zone_tombstone").contains(where: { $0.name == "purge" }) {
                try keepPurgesApart(database)
            }
            try database.execute(sql: "PRAGMA user_version = 3")
        }
        return migrator
    }

    /// Checks that the file is new (empty) or this library's, in a version it reads; any other file is an
    /// ``SQLiteCloudDatabase/OpenError``. Reads only.
    static func check(_ database: Database, path: String) throws {
        let applicationID = try Int32.fetchOne(database, sql: "PRAGMA application_id") ?? 0
        let version = try Int.fetchOne(database, sql: "PRAGMA user_version") ?? 0
        let tableCount = try Int.fetchOne(database, sql: "SELECT count(*) FROM sqlite_master") ?? 0
        if applicationID == 0 && version == 0 && tableCount == 0 { return }
        guard applicationID == Self.applicationID else {
            throw SQLiteCloudDatabase.OpenError.foreignDatabase(path: path)
        }
        guard version <= currentVersion else {
            throw SQLiteCloudDatabase.OpenError.unsupportedSchemaVersion(
                path: path, found: version, supported: currentVersion)
        }
    }

    /// Adds the index of each record's parent, which only a server of several users reads (to tell whether a
    /// record has children after a write to a shared zone): a plain file doesn't pay for it on every save. The
    /// parent is in the record's JSON, so the index is on the expression; files without it stay readable by every
    /// release of the same schema version.
    static func addParentIndex(_ database: Database) throws {
        try database.execute(
            sql: """
                CREATE INDEX IF NOT EXISTS record_by_parent
                ON record (zone_name, owner_name, json_extract(body, '$.parentID.recordName'))
                """)
    }

    private static func create(_ database: Database) throws {
        try database.execute(sql: firstLayout)
        try database.execute(
            sql: "INSERT INTO zone (zone_name, owner_name) VALUES (?, ?)",
            arguments: [CloudRecord.ZoneID.default.zoneName, CloudRecord.ZoneID.default.ownerName]
        )
        try database.execute(sql: "PRAGMA application_id = \(applicationID)")
    }

    /// Version 1's tables: zones, records with their references, assets and earlier versions, and counters.
    private static let firstLayout = """
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
        """

    /// Version 2: the change log. Each record row carries the sequence number of its latest change; deleted
    /// records leave a tombstone; each zone has a generation (a zone created again starts a new one, so tokens of
    /// its earlier life are expired), the sequence number it started at, its latest change, and the horizon below
    /// which its tombstones were compacted away. Records that exist when a file is migrated get sequence numbers
    /// in the order they were first saved.
    private static func addChangeLog(_ database: Database) throws {
        try database.execute(
            sql: """
                ALTER TABLE record ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
                UPDATE record SET change_seq = id;
                CREATE INDEX record_by_change ON record (zone_name, owner_name, change_seq);
                CREATE INDEX record_by_modification ON record (zone_name, owner_name, modified_at);

                ALTER TABLE zone ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE zone ADD COLUMN start_seq INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE zone ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE zone ADD COLUMN horizon_seq INTEGER NOT NULL DEFAULT 0;
                UPDATE zone SET change_seq = coalesce((SELECT max(id) FROM record
                    WHERE record.zone_name = zone.zone_name AND record.owner_name = zone.owner_name), 0);
                CREATE INDEX zone_by_change ON zone (change_seq);

                CREATE TABLE record_tombstone (
                    zone_name TEXT NOT NULL,
                    owner_name TEXT NOT NULL,
                    record_name TEXT NOT NULL,
                    record_type TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (zone_name, owner_name, record_name)
                ) WITHOUT ROWID;
                CREATE INDEX record_tombstone_by_seq ON record_tombstone (zone_name, owner_name, seq);
                CREATE INDEX record_tombstone_by_age ON record_tombstone (seq);

                CREATE TABLE zone_tombstone (
                    zone_name TEXT NOT NULL,
                    owner_name TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (zone_name, owner_name)
                ) WITHOUT ROWID;
                CREATE INDEX zone_tombstone_by_seq ON zone_tombstone (seq);

                CREATE TABLE subscription (
                    id TEXT PRIMARY KEY NOT NULL,
                    body TEXT NOT NULL
                );

                CREATE TABLE text_metadata (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                );
                """)
        // Every zone gets a generation of its own; the counters continue from there.
        let zones = try Row.fetchAll(database, sql: "SELECT zone_name, owner_name FROM zone ORDER BY zone_name")
        for (index, zone) in zones.enumerated() {
            try database.execute(
                sql: "UPDATE zone SET generation = ? WHERE zone_name = ? AND owner_name = ?",
                arguments: [index + 1, zone["zone_name"] as String, zone["owner_name"] as String])
        }
        let sequence = try Int.fetchOne(database, sql: "SELECT coalesce(max(id), 0) FROM record") ?? 0
        try database.execute(
            sql: """
                INSERT INTO metadata (key, value) VALUES ('change_sequence', ?), ('next_generation', ?),
                    ('database_generation', 0);
                INSERT INTO text_metadata (key, value) VALUES ('user_record_name', ?);
                """,
            arguments: [sequence, zones.count + 1, "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")])
    }

    /// Gives a zone two tombstones, its purge and its latest other deletion, as CloudKit reports both: a device
    /// that missed a purge, the zone's creation again and a later deletion still hears of the purge
    /// (`SQLiteCloudDatabase.deleteZone(_:reason:)`).
    private static func keepPurgesApart(_ database: Database) throws {
        try database.execute(
            sql: """
                CREATE TABLE zone_tombstone_v3 (
                    zone_name TEXT NOT NULL,
                    owner_name TEXT NOT NULL,
                    purge INTEGER NOT NULL,
                    reason TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (zone_name, owner_name, purge)
                ) WITHOUT ROWID;
                INSERT INTO zone_tombstone_v3 (zone_name, owner_name, purge, reason, seq)
                    SELECT zone_name, owner_name, reason = 'purged', reason, seq FROM zone_tombstone;
                DROP TABLE zone_tombstone;
                ALTER TABLE zone_tombstone_v3 RENAME TO zone_tombstone;
                CREATE INDEX zone_tombstone_by_seq ON zone_tombstone (seq);
                """)
    }
}
