import Foundation
import GRDB
import Logging

/// The local store's tables. Every table of the store's own starts with `ncs_`, so a store can live in a file the
/// app also uses; the record types' tables are named after the types (``RecordTypeTable``).
/// <doc:HowTheStoreKeepsRecords> explains the layout to users.
///
/// - A table per record type (listed in `ncs_table`): a row per record, a column per field, which models read and
///   queries and declared indexes run on.
/// - `ncs_record`: each record the app sees (``RecordCoding``'s binary form), with the server's system fields it
///   was last saved or fetched with, the last server copy (the ancestor of three-way merges), the user's edit times
///   and a local version; the dates queries sort on. Its `fields` column, the JSON that queries read before v7, is
///   empty. A rowid table, so GRDB's observations see its changes.
/// - `ncs_reference`: who references whom, so "the students of this school" is an index lookup; with the holder's
///   and the target's rows, so a graph's next level is read by row (``StoreGraphReader``).
/// - `ncs_outbox`: one row per record with a change the server doesn't have yet. A row leaves only when the server
///   acknowledged that version, or a policy or the app decided (with an event).
/// - `ncs_zone`: every zone the store has data in or syncs: its change token (or date cursor), whether it exists on
///   the server, and whether a full fetch is under way (so an interrupted one still reconciles when it ends).
/// - `ncs_state`: the database's change token, the user the data belongs to, counters.
/// - `ncs_asset_use`: which rows point to which of the store's asset copies; `ncs_asset_garbage` the copies a row
///   let go of in the current transaction (``AssetFiles``).
/// - `ncs_skipped`: records a fetch couldn't apply (the server couldn't give them, or the conflict policy failed on
///   them), reported and left until the app asks for them again.
/// - `ncs_server_copy`: earlier server copies of each record by change tag (the newest
///   ``StoreSchema/keptServerCopies``), each with the local record of that time (the server copy and the local
///   edits then pending), which a trigger keeps as a record's server copy is replaced: what a model read earlier
///   held, which its save merges against.
/// - `ncs_index`: the indexes the app declared, so that a later declaration drops the ones it no longer lists.
/// - `ncs_record_type_change`: a row per record type, whose count its records' triggers raise on every change that
///   a read can see, so that the observations of one type are woken by its changes alone (``RecordTypeChanges``).
/// - `ncs_zone_key`: a number for each zone records were written in, which each record keeps (`zone_key`) and the
///   index by type and the declared indexes lead with.
enum StoreSchema {
    /// Brings a store's file to the current layout, and logs a new file at `info` and a migration at `notice`, with
    /// the layouts before and after.
    static func migrate(_ writer: any DatabaseWriter, logger: Logger) throws {
        let migrator = migrator()
        let before = try writer.read { db in try migrator.appliedMigrations(db) }
        try migrator.migrate(writer)
        let after = try writer.read { db in try migrator.appliedMigrations(db) }
        guard after != before, let current = after.last else { return }
        if let previous = before.last {
            logger.notice("store migrated", metadata: ["from": "\(previous)", "to": "\(current)"])
        } else {
            logger.info("store created", metadata: ["layout": "\(current)"])
        }
    }

    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: createTables)
        migrator.registerMigration(
            "v2: copies sent, zones to fetch, asset uses, skipped records",
            migrate: addSentCopiesFetchNeedsAssetUsesAndSkippedRecords)
        migrator.registerMigration(
            "v3: binary records, queryable fields, earlier server copies",
            migrate: storeRecordsInBinaryWithQueryableFields)
        migrator.registerMigration(
            "v4: records of a type in name order, references by row", migrate: indexRecordsByTypeAndReferencesByRow)
        migrator.registerMigration("v5: zones by number in declared indexes", migrate: numberZones)
        migrator.registerMigration("v6: changes counted by record type", migrate: countChangesByRecordType)
        migrator.registerMigration("v7: a table per record type", migrate: makeATablePerRecordType)
        // A change queued before it has no time: `PendingChange.queuedAt` says it's unknown rather than guess.
        migrator.registerMigration("v8: when each change was queued") { db in
            try db.execute(sql: "ALTER TABLE ncs_outbox ADD COLUMN queued_at REAL")
        }
        return migrator
    }

    /// The first layout: records, references, the outbox, zones and state.
    private static func createTables(_ db: Database) throws {
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

    /// How many earlier server copies of a record the store keeps, so that a model read before the last few
    /// fetches still merges against the version it was read at (``SyncStore/save(_:in:)``).
    static let keptServerCopies = 4
}
