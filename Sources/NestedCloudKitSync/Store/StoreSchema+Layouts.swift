import Foundation
import GRDB
import Logging

// The layouts after the first (v2 to v7), each a migration of the one before: a store written by any earlier
// release opens in this one. Apart from `StoreSchema.swift` because they only grow.

extension StoreSchema {
    static func addSentCopiesFetchNeedsAssetUsesAndSkippedRecords(_ db: Database) throws {
        // A pending save remembers every copy of it that was sent without an answer: the server may hold any
        // of them, and each, fetched back, is this device's own write, not another device's change.
        try db.execute(sql: "ALTER TABLE ncs_outbox ADD COLUMN sent_copies BLOB")
        // A zone the database's changes listed as changed stays to fetch until it is, whatever the database's
        // token says meanwhile.
        try db.execute(sql: "ALTER TABLE ncs_zone ADD COLUMN needs_fetch INTEGER NOT NULL DEFAULT 0")
        // The files each row points to (a JSON array of paths, NULL for none), which triggers list in
        // ncs_asset_use: a row without assets costs nothing more, and no write can forget to keep the list.
        try db.execute(sql: "ALTER TABLE ncs_record ADD COLUMN asset_files TEXT")
        try db.execute(sql: "ALTER TABLE ncs_outbox ADD COLUMN ancestor_files TEXT")
        try db.execute(sql: "ALTER TABLE ncs_outbox ADD COLUMN sent_files TEXT")
        try db.execute(sql: assetUseTables + recordFileTriggers + outboxFileTriggers + skippedTable)
        try listAssetFilesOfFirstLayoutRows(db)
    }

    /// A store of the first layout lists the copies its rows point to, so none of them is taken for garbage.
    static func listAssetFilesOfFirstLayoutRows(_ db: Database) throws {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT zone_owner, zone_name, record_name, record, ancestor, edit_time, field_edit_times, version
                FROM ncs_record
                """)
        for row in rows {
            let stored = try StoreTables.storedRecord(row)
            guard let files = AssetFiles.fileList(in: [stored.record, stored.ancestor]) else { continue }
            try db.execute(
                sql: """
                    UPDATE ncs_record SET asset_files = ? WHERE zone_owner = ? AND zone_name = ? AND record_name = ?
                    """,
                arguments: [files, row["zone_owner"], row["zone_name"], row["record_name"]])
        }
        for row in try Row.fetchAll(db, sql: "SELECT * FROM ncs_outbox WHERE ancestor IS NOT NULL") {
            let entry = try StoreTables.outboxEntry(row)
            guard let files = AssetFiles.fileList(in: [entry.ancestor]) else { continue }
            try db.execute(
                sql: """
                    UPDATE ncs_outbox SET ancestor_files = ?
                    WHERE zone_owner = ? AND zone_name = ? AND record_name = ?
                    """,
                arguments: [files, row["zone_owner"], row["zone_name"], row["record_name"]])
        }
    }

    static func storeRecordsInBinaryWithQueryableFields(_ db: Database) throws {
        // The table is made anew as a rowid table: SQLite reports changes of rowid tables only, which is
        // how GRDB's observations know that a read of records is out of date; and rows of this size (a
        // record, its ancestor and its fields) are what rowid tables store best. Its new columns: the fields as
        // SQLite compares them (FieldProjection), for queries and declared indexes; the dates queries sort on;
        // the change tag of the server copy the row holds, which keeps earlier copies. Dropping the old table
        // fires no trigger, so the asset uses it listed stay.
        try db.execute(
            sql: """
                CREATE TABLE ncs_record_v3 (
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
                    asset_files TEXT,
                    fields TEXT NOT NULL DEFAULT '{}',
                    created_at REAL,
                    modified_at REAL,
                    ancestor_tag TEXT,
                    UNIQUE (zone_owner, zone_name, record_name)
                );
                INSERT INTO ncs_record_v3 (zone_owner, zone_name, record_name, record_type, record, ancestor,
                    edit_time, field_edit_times, version, fetch_epoch, asset_files)
                SELECT zone_owner, zone_name, record_name, record_type, record, ancestor, edit_time,
                    field_edit_times, version, fetch_epoch, asset_files
                FROM ncs_record;
                DROP TABLE ncs_record;
                ALTER TABLE ncs_record_v3 RENAME TO ncs_record;
                CREATE INDEX ncs_record_by_type ON ncs_record (record_type, zone_owner, zone_name);
                CREATE TABLE ncs_index (
                    name TEXT PRIMARY KEY NOT NULL,
                    record_type TEXT NOT NULL,
                    definition TEXT NOT NULL
                ) WITHOUT ROWID;
                """)
        // The new table's triggers: the asset uses as before, and the earlier server copies.
        try db.execute(sql: recordFileTriggers + serverCopyTable)
        try convertRowsToBinary(db)
    }

    /// Two layouts for reading graphs:
    /// - Reading the records of a type (every `fetchAll`, and the roots of a graph) walks them in name order. The
    ///   index by type didn't hold the name, so SQLite walked the zone's every record by name instead and read each
    ///   row to check its type: with a thousand folders of ten files, eleven thousand rows for a thousand. With the
    ///   name in the index, it reads the rows of the type only, already in order.
    /// - A reference also holds the rows of its holder and its target (``referenceRowTriggers`` keep them), so the
    ///   records a level of models reference are read by following their rows (``StoreGraphReader``): one integer
    ///   lookup per holder instead of a lookup by three names per target.
    static func indexRecordsByTypeAndReferencesByRow(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP INDEX ncs_record_by_type;
                CREATE INDEX ncs_record_by_type ON ncs_record (record_type, zone_owner, zone_name, record_name);
                ALTER TABLE ncs_reference ADD COLUMN holder_row INTEGER;
                ALTER TABLE ncs_reference ADD COLUMN target_row INTEGER;
                UPDATE ncs_reference SET
                    holder_row = (
                        SELECT rowid FROM ncs_record
                        WHERE zone_owner = holder_zone_owner AND zone_name = holder_zone_name
                            AND record_name = holder_name),
                    target_row = (
                        SELECT rowid FROM ncs_record
                        WHERE zone_owner = target_zone_owner AND zone_name = target_zone_name
                            AND record_name = target_name);
                CREATE INDEX ncs_reference_by_holder_row ON ncs_reference (holder_row, target_row);
                """ + referenceRowTriggers)
    }

    /// A row per record type in `ncs_record_type_change`, which a trigger of every insertion, deletion and change of
    /// what a read sees (not a fetch's bookkeeping, `fetch_epoch`) counts up: after a commit, the counts that moved
    /// name the types the transaction changed, and ``RecordTypeChanges`` wakes only the observations of those types. Triggers, so that every write of a record is counted however it is made; a new
    /// type's row is inserted only if missing (an `OR IGNORE` would give way to the conflict policy of the statement
    /// that fired the trigger, an upsert's among them).
    static func countChangesByRecordType(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE ncs_record_type_change (
                    id INTEGER PRIMARY KEY,
                    record_type TEXT NOT NULL UNIQUE,
                    changes INTEGER NOT NULL DEFAULT 0
                );
                INSERT INTO ncs_record_type_change (record_type) SELECT DISTINCT record_type FROM ncs_record;
                CREATE TRIGGER ncs_record_type_inserted AFTER INSERT ON ncs_record BEGIN
                    INSERT INTO ncs_record_type_change (record_type) SELECT NEW.record_type
                    WHERE NOT EXISTS (SELECT 1 FROM ncs_record_type_change WHERE record_type = NEW.record_type);
                    UPDATE ncs_record_type_change SET changes = changes + 1 WHERE record_type = NEW.record_type;
                END;
                CREATE TRIGGER ncs_record_type_updated
                AFTER UPDATE OF record, record_type, fields, created_at, modified_at, zone_key, zone_owner, zone_name,
                    record_name ON ncs_record
                BEGIN
                    INSERT INTO ncs_record_type_change (record_type) SELECT NEW.record_type
                    WHERE NOT EXISTS (SELECT 1 FROM ncs_record_type_change WHERE record_type = NEW.record_type);
                    UPDATE ncs_record_type_change SET changes = changes + 1
                    WHERE record_type IN (OLD.record_type, NEW.record_type);
                END;
                CREATE TRIGGER ncs_record_type_deleted AFTER DELETE ON ncs_record BEGIN
                    UPDATE ncs_record_type_change SET changes = changes + 1 WHERE record_type = OLD.record_type;
                END;
                """)
    }

    /// Each record type gets a table of its own, a column per field (``RecordTypeTable``), filled from the records
    /// the store holds; the fields' JSON column is emptied, and the indexes declared on it dropped (the next
    /// declaration makes them on the tables' columns, under new names).
    static func makeATablePerRecordType(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE ncs_table (
                    record_type TEXT PRIMARY KEY NOT NULL,
                    table_name TEXT NOT NULL UNIQUE,
                    columns TEXT NOT NULL
                ) WITHOUT ROWID;
                """)
        for name in try String.fetchAll(db, sql: "SELECT name FROM ncs_index") {
            try db.execute(sql: "DROP INDEX IF EXISTS \(StoreSQL.identifier(name))")
        }
        try db.execute(sql: "DELETE FROM ncs_index")
        let rows = try Row.fetchCursor(
            db, sql: "SELECT rowid, record, zone_key, created_at, modified_at FROM ncs_record ORDER BY rowid")
        while let row = try rows.next() {
            try RecordTypeTable.write(
                try RecordCoding.decode(row, column: 1), row: row[0], zoneKey: row[2], createdAt: row[3],
                modifiedAt: row[4], in: db)
        }
        try db.execute(sql: "UPDATE ncs_record SET fields = '{}' WHERE fields <> '{}'")
    }

    /// Each zone gets a number (`ncs_zone_key`), and each record its zone's (`zone_key`): the index by type and
    /// those an app declares lead with it instead of the zone's owner and name, two strings of some twenty bytes
    /// each in every entry. A count runs over an index's entries, so their size is its time: an index of the notes by `isDone`
    /// and date took 3.6 times the pages of the same index on a plain table, and its count four times as long.
    static func numberZones(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE ncs_zone_key (
                    key INTEGER PRIMARY KEY,
                    zone_owner TEXT NOT NULL,
                    zone_name TEXT NOT NULL,
                    UNIQUE (zone_owner, zone_name)
                );
                ALTER TABLE ncs_record ADD COLUMN zone_key INTEGER NOT NULL DEFAULT 0;
                INSERT OR IGNORE INTO ncs_zone_key (zone_owner, zone_name)
                    SELECT DISTINCT zone_owner, zone_name FROM ncs_record;
                UPDATE ncs_record SET zone_key = (
                    SELECT key FROM ncs_zone_key
                    WHERE ncs_zone_key.zone_owner = ncs_record.zone_owner
                        AND ncs_zone_key.zone_name = ncs_record.zone_name);
                DROP INDEX ncs_record_by_type;
                CREATE INDEX ncs_record_by_type ON ncs_record (record_type, zone_key, record_name);
                """)
    }

    /// A reference's target row is set when the reference is written (``StoreTables/write(_:epoch:in:)``) if the
    /// target is in the store, and by these triggers when it arrives or goes. Rows are never moved: a record's
    /// row is updated in place (an upsert), so only an insertion or a deletion changes which row a name is.
    /// A deleted record's own references go with it, so a row number SQLite gives again never inherits them.
    private static let referenceRowTriggers = """
        CREATE TRIGGER ncs_record_reference_target_added AFTER INSERT ON ncs_record BEGIN
            UPDATE ncs_reference SET target_row = NEW.rowid
            WHERE target_zone_owner = NEW.zone_owner AND target_zone_name = NEW.zone_name
                AND target_name = NEW.record_name;
        END;
        CREATE TRIGGER ncs_record_reference_rows_removed AFTER DELETE ON ncs_record BEGIN
            UPDATE ncs_reference SET target_row = NULL
            WHERE target_zone_owner = OLD.zone_owner AND target_zone_name = OLD.zone_name
                AND target_name = OLD.record_name;
            DELETE FROM ncs_reference WHERE holder_row = OLD.rowid;
        END;
        """

    /// Every row of the earlier layouts in the new form: records and ancestors from JSON to binary, their fields
    /// projected, their dates and tags filled in. Outbox rows keep their JSON, which still reads.
    static func convertRowsToBinary(_ db: Database) throws {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT zone_owner, zone_name, record_name, record, ancestor, edit_time, field_edit_times, version
                FROM ncs_record
                """)
        for row in rows {
            let stored = try StoreTables.storedRecord(row)
            let ancestorBytes: Data? = (row["ancestor"] as Data?).map {
                $0.isEmpty ? $0 : stored.ancestor.map(RecordCoding.encode) ?? $0
            }
            let system = stored.record.systemFields
            let editSeconds = Double(stored.editTime) / 1000
            try db.execute(
                sql: """
                    UPDATE ncs_record SET record = ?, ancestor = ?, fields = ?, created_at = ?, modified_at = ?,
                        ancestor_tag = ?
                    WHERE zone_owner = ? AND zone_name = ? AND record_name = ?
                    """,
                arguments: [
                    RecordCoding.encode(stored.record), ancestorBytes,
                    FieldProjection.json(of: stored.record.fields),
                    system?.creationDate?.timeIntervalSince1970 ?? editSeconds,
                    max(system?.modificationDate?.timeIntervalSince1970 ?? editSeconds, editSeconds),
                    stored.ancestor?.systemFields?.changeTag,
                    row["zone_owner"], row["zone_name"], row["record_name"],
                ])
        }
    }

    // The SQL more than one migration runs. A migration's effect must never change once released: a change to a
    // table's triggers is a new migration, not an edit of these.

    /// Where the store lists the asset files rows point to, and the files a transaction let go of.
    private static let assetUseTables = """
        CREATE TABLE ncs_asset_use (
            file TEXT NOT NULL,
            zone_owner TEXT NOT NULL,
            zone_name TEXT NOT NULL,
            record_name TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('record', 'outbox'))
        );
        CREATE INDEX ncs_asset_use_by_file ON ncs_asset_use (file);
        CREATE INDEX ncs_asset_use_by_row ON ncs_asset_use (zone_owner, zone_name, record_name, source);
        CREATE TABLE ncs_asset_garbage (file TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
        CREATE TRIGGER ncs_asset_use_released AFTER DELETE ON ncs_asset_use BEGIN
            INSERT OR IGNORE INTO ncs_asset_garbage (file) VALUES (old.file);
        END;
        """

    /// Keep `ncs_asset_use` in step with `ncs_record.asset_files`. Made in v2, and again in v3 for the table v3
    /// makes anew.
    private static let recordFileTriggers = """
        CREATE TRIGGER ncs_record_files_added AFTER INSERT ON ncs_record
        WHEN new.asset_files IS NOT NULL BEGIN
            INSERT INTO ncs_asset_use (file, zone_owner, zone_name, record_name, source)
            SELECT value, new.zone_owner, new.zone_name, new.record_name, 'record'
            FROM json_each(new.asset_files);
        END;
        CREATE TRIGGER ncs_record_files_changed AFTER UPDATE OF asset_files ON ncs_record
        WHEN old.asset_files IS NOT new.asset_files BEGIN
            DELETE FROM ncs_asset_use
            WHERE zone_owner = old.zone_owner AND zone_name = old.zone_name
                AND record_name = old.record_name AND source = 'record';
            INSERT INTO ncs_asset_use (file, zone_owner, zone_name, record_name, source)
            SELECT value, new.zone_owner, new.zone_name, new.record_name, 'record'
            FROM json_each(new.asset_files);
        END;
        CREATE TRIGGER ncs_record_files_removed AFTER DELETE ON ncs_record
        WHEN old.asset_files IS NOT NULL BEGIN
            DELETE FROM ncs_asset_use
            WHERE zone_owner = old.zone_owner AND zone_name = old.zone_name
                AND record_name = old.record_name AND source = 'record';
        END;
        """

    /// Keep `ncs_asset_use` in step with the outbox's ancestor and sent copies.
    private static let outboxFileTriggers = """
        CREATE TRIGGER ncs_outbox_files_added AFTER INSERT ON ncs_outbox
        WHEN new.ancestor_files IS NOT NULL OR new.sent_files IS NOT NULL BEGIN
            INSERT INTO ncs_asset_use (file, zone_owner, zone_name, record_name, source)
            SELECT value, new.zone_owner, new.zone_name, new.record_name, 'outbox'
            FROM json_each(new.ancestor_files)
            UNION SELECT value, new.zone_owner, new.zone_name, new.record_name, 'outbox'
            FROM json_each(new.sent_files);
        END;
        CREATE TRIGGER ncs_outbox_files_changed AFTER UPDATE OF ancestor_files, sent_files ON ncs_outbox
        WHEN old.ancestor_files IS NOT new.ancestor_files OR old.sent_files IS NOT new.sent_files BEGIN
            DELETE FROM ncs_asset_use
            WHERE zone_owner = old.zone_owner AND zone_name = old.zone_name
                AND record_name = old.record_name AND source = 'outbox';
            INSERT INTO ncs_asset_use (file, zone_owner, zone_name, record_name, source)
            SELECT value, new.zone_owner, new.zone_name, new.record_name, 'outbox'
            FROM json_each(new.ancestor_files)
            UNION SELECT value, new.zone_owner, new.zone_name, new.record_name, 'outbox'
            FROM json_each(new.sent_files);
        END;
        CREATE TRIGGER ncs_outbox_files_removed AFTER DELETE ON ncs_outbox
        WHEN old.ancestor_files IS NOT NULL OR old.sent_files IS NOT NULL BEGIN
            DELETE FROM ncs_asset_use
            WHERE zone_owner = old.zone_owner AND zone_name = old.zone_name
                AND record_name = old.record_name AND source = 'outbox';
        END;
        """

    /// Records a fetch couldn't apply.
    private static let skippedTable = """
        CREATE TABLE ncs_skipped (
            zone_owner TEXT NOT NULL,
            zone_name TEXT NOT NULL,
            record_name TEXT NOT NULL,
            reason TEXT NOT NULL,
            retry INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (zone_owner, zone_name, record_name)
        ) WITHOUT ROWID;
        """

    /// Earlier server copies of each record (the newest ``keptServerCopies``), kept by a trigger as a record's server
    /// copy is replaced, and removed with the record.
    private static let serverCopyTable = """
        CREATE TABLE ncs_server_copy (
            zone_owner TEXT NOT NULL,
            zone_name TEXT NOT NULL,
            record_name TEXT NOT NULL,
            change_tag TEXT NOT NULL,
            record BLOB NOT NULL,
            local BLOB NOT NULL,
            kept INTEGER NOT NULL,
            PRIMARY KEY (zone_owner, zone_name, record_name, change_tag)
        ) WITHOUT ROWID;
        CREATE TRIGGER ncs_record_server_copy_replaced AFTER UPDATE OF ancestor_tag ON ncs_record
        WHEN old.ancestor_tag IS NOT NULL AND old.ancestor_tag IS NOT new.ancestor_tag BEGIN
            INSERT OR REPLACE INTO ncs_server_copy (zone_owner, zone_name, record_name, change_tag,
                record, local, kept)
            VALUES (old.zone_owner, old.zone_name, old.record_name, old.ancestor_tag,
                CASE WHEN length(old.ancestor) = 0 THEN old.record ELSE old.ancestor END, old.record,
                (SELECT COALESCE(MAX(kept), 0) + 1 FROM ncs_server_copy
                    WHERE zone_owner = old.zone_owner AND zone_name = old.zone_name
                        AND record_name = old.record_name));
            DELETE FROM ncs_server_copy
            WHERE zone_owner = old.zone_owner AND zone_name = old.zone_name
                AND record_name = old.record_name
                AND kept NOT IN (
                    SELECT kept FROM ncs_server_copy
                    WHERE zone_owner = old.zone_owner AND zone_name = old.zone_name
                        AND record_name = old.record_name
                    ORDER BY kept DESC LIMIT \(StoreSchema.keptServerCopies));
        END;
        CREATE TRIGGER ncs_record_server_copies_removed AFTER DELETE ON ncs_record BEGIN
            DELETE FROM ncs_server_copy
            WHERE zone_owner = old.zone_owner AND zone_name = old.zone_name
                AND record_name = old.record_name;
        END;
        """
}
