import GRDB

/// The local store's tables. Every table starts with `ncs_`, so a store can live in a file the app also uses.
///
/// - `ncs_record`: each record the app sees, with the server's system fields it was last saved or fetched with, the
///   last server copy (the ancestor of three-way merges), the user's edit times and a local version.
/// - `ncs_reference`: who references whom, so "the students of this school" is an index lookup.
/// - `ncs_outbox`: one row per record with a change the server doesn't have yet. A row leaves only when the server
///   acknowledged that version, or a policy decided (with an event).
/// - `ncs_zone`: every zone the store has data in or syncs: its change token (or date cursor), whether it exists on
///   the server, and whether a full fetch is under way (so an interrupted one still reconciles when it ends).
/// - `ncs_state`: the database's change token, the user the data belongs to, counters.
enum StoreSchema {
    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE ncs_record (
                        zone_owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        record_name TEXT NOT NULL,
                        record_type TEXT NOT NULL,
                        record BLOB NOT NULL,
                        ancestor BLOB,
                        edit_time INTEGER NOT NULL,
                        field_edit_times BLOB NOT NULL,
                        version INTEGER NOT NULL,
                        fetch_epoch INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (zone_owner, zone_name, record_name)
                    ) WITHOUT ROWID;
                    CREATE INDEX ncs_record_by_type ON ncs_record (record_type, zone_owner, zone_name);
                    CREATE TABLE ncs_reference (
                        holder_zone_owner TEXT NOT NULL,
                        holder_zone_name TEXT NOT NULL,
                        holder_name TEXT NOT NULL,
                        field TEXT NOT NULL,
                        action TEXT NOT NULL,
                        target_zone_owner TEXT NOT NULL,
                        target_zone_name TEXT NOT NULL,
                        target_name TEXT NOT NULL
                    );
                    CREATE INDEX ncs_reference_by_target
                        ON ncs_reference (target_zone_owner, target_zone_name, target_name);
                    CREATE INDEX ncs_reference_by_holder
                        ON ncs_reference (holder_zone_owner, holder_zone_name, holder_name);
                    CREATE TABLE ncs_outbox (
                        zone_owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        record_name TEXT NOT NULL,
                        operation TEXT NOT NULL CHECK (operation IN ('save', 'delete')),
                        record_type TEXT NOT NULL,
                        version INTEGER NOT NULL,
                        sequence INTEGER NOT NULL,
                        ancestor BLOB,
                        failures INTEGER NOT NULL DEFAULT 0,
                        last_error TEXT,
                        halted INTEGER NOT NULL DEFAULT 0,
                        sent INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (zone_owner, zone_name, record_name)
                    ) WITHOUT ROWID;
                    CREATE INDEX ncs_outbox_by_sequence ON ncs_outbox (halted, sequence);
                    CREATE TABLE ncs_zone (
                        zone_owner TEXT NOT NULL,
                        zone_name TEXT NOT NULL,
                        token BLOB,
                        created INTEGER NOT NULL DEFAULT 0,
                        modified_after REAL,
                        last_full_check REAL,
                        fetch_epoch INTEGER NOT NULL DEFAULT 0,
                        reconcile_pending INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (zone_owner, zone_name)
                    ) WITHOUT ROWID;
                    CREATE TABLE ncs_state (key TEXT PRIMARY KEY NOT NULL, value BLOB) WITHOUT ROWID;
                    """)
        }
        return migrator
    }
}
