import Foundation
import GRDB
import NestedCloudKitCodable

/// The table of one record type: a row per record of the type the store holds, a column per field its records have
/// had, which models read, queries filter and sort on, declared indexes index, and an app's own SQL can read.
///
/// ```sql
/// CREATE TABLE "Note" (
///     _record_row INTEGER PRIMARY KEY,  -- the record's row in ncs_record
///     _zone_key INTEGER NOT NULL,       -- its zone (ncs_zone_key)
///     _record_name TEXT NOT NULL,
///     _created_at REAL, _modified_at REAL, -- seconds since 1970: the server's dates, or the user's edit
///     _inexact INTEGER NOT NULL DEFAULT 0, -- 1: a model reads this row from its record (ColumnValue)
///     "title" TEXT, "isDone" INTEGER, "due" REAL, ...
///     UNIQUE (_zone_key, _record_name)
/// )
/// ```
///
/// The table is named after the record type, unless an app's table already has the name (or it is one of SQLite's
/// or the store's): then `ncs_type_` and the type. The store's system columns start with an underscore, which no
/// CloudKit field name does. A field gets its column the first time a record has it, declared as its kind
/// (``ColumnValue``); a field given a column by an index declaration before any record had it has no declared type.
///
/// Each record stays whole in `ncs_record` beside its row, with its system fields, its server copy, its edit times
/// and any field that has no column: what sync sends, merges and keeps for the app versions that know more fields.
/// Its row is written in the same transaction as the record, and deleted with it by a trigger. Rows change only
/// through the store: triggers refuse a write from any other connection (they call a function only the store's
/// connections have, ``StoreWriteGuard``).
struct RecordTypeTable: Sendable {
    /// A field's column.
    struct Column: Sendable, Hashable {
        var field: String
        /// The kind of the values the column holds; `nil` until a record has the field.
        var kind: CloudValue.Kind?
    }

    let recordType: String
    let tableName: String
    let columns: [Column]
    /// Each column's position in ``columns``, by field.
    let positions: [String: Int]
    /// The statement that writes a row: every column, in order.
    let upsertSQL: String
    /// Where a statement of every column (`SELECT *`, the system columns then the fields) has each.
    let layout: TableRowLayout?
    /// Every row of a zone (its owner and name the arguments), by record name: what `fetchAll` reads.
    let selectInZoneSQL: String
    /// The row of a record (its zone's owner and name, and its name): what a read by ID reads.
    let selectByNameSQL: String

    /// The most field columns a table gets: SQLite's default limit is 2,000 columns in a table. Fields past it stay
    /// in the record alone, and rows with them are read from it.
    static let maximumColumns = 1_000

    /// The names of the system columns, before the fields'.
    static let systemColumns = [
        "_record_row", "_zone_key", "_record_name", "_created_at", "_modified_at", "_inexact",
    ]

    init(recordType: String, tableName: String, columns: [Column]) {
        self.recordType = recordType
        self.tableName = tableName
        self.columns = columns
        positions = Dictionary(columns.enumerated().map { ($1.field, $0) }, uniquingKeysWith: { first, _ in first })
        layout = TableRowLayout(
            names: Self.systemColumns + columns.map(\.field), fields: columns, positions: positions)
        let names = Self.systemColumns + columns.map { StoreSQL.identifier($0.field) }
        let table = StoreSQL.identifier(tableName)
        let inZone =
            "SELECT * FROM \(table) WHERE _zone_key = (SELECT key FROM ncs_zone_key WHERE zone_owner = ? AND zone_name = ?)"
        selectInZoneSQL = inZone + " ORDER BY _record_name"
        selectByNameSQL = inZone + " AND _record_name = ?"
        upsertSQL =
            "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: names.count).joined(separator: ", ")
            + ") ON CONFLICT (_record_row) DO UPDATE SET "
            + names.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
    }

    /// The expression of a field in a query: its column, or NULL for a field no record of the type has had.
    func expression(ofField field: String) -> String {
        positions[field] == nil ? "NULL" : StoreSQL.identifier(tableName) + "." + StoreSQL.identifier(field)
    }

    // MARK: The catalog

    /// Every record type's table and columns, as `ncs_table` lists them: a field's name and kind, `|` between
    /// fields (no field name holds one).
    private static func encode(_ columns: [Column]) -> String {
        columns.map { $0.field + ":" + ($0.kind?.rawValue ?? "") }.joined(separator: "|")
    }

    private static func decode(_ text: String) -> [Column] {
        guard !text.isEmpty else { return [] }
        return text.split(separator: "|", omittingEmptySubsequences: false).map { entry in
            let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            return Column(
                field: String(parts[0]), kind: parts.count > 1 ? CloudValue.Kind(rawValue: String(parts[1])) : nil)
        }
    }

    /// The tables read from the catalog, by record type, with the catalog's entry they were read from: the same
    /// entry is the same table in any store, so no store's change (or rolled back transaction) can make a cached
    /// table wrong.
    private static let parsed = Locked<[String: (entry: String, table: RecordTypeTable)]>([:])

    /// The record type's table, or `nil` if the store has none.
    static func existing(for recordType: String, in db: Database) throws -> RecordTypeTable? {
        // One value, the columns then the table's name after a U+001F that no column list holds (fields are
        // ``isColumnName(_:)`` names): read without a row, which costs a read by ID a tenth more.
        guard
            let entry = try String.fetchOne(
                db.cachedStatement(
                    sql: "SELECT columns || char(31) || table_name FROM ncs_table WHERE record_type = ?"),
                arguments: [recordType])
        else { return nil }
        if let cached = parsed.withLock({ $0[recordType] }), cached.entry == entry { return cached.table }
        guard let separator = entry.firstIndex(of: "\u{1F}") else {
            throw SyncError.store("the store's list of tables has a damaged entry for \(recordType)")
        }
        let table = RecordTypeTable(
            recordType: recordType, tableName: String(entry[entry.index(after: separator)...]),
            columns: decode(String(entry[..<separator])))
        parsed.withLock { cache in
            if cache.count > 4_096 { cache.removeAll() }
            cache[recordType] = (entry, table)
        }
        return table
    }

    /// Every table the store has, by record type.
    static func all(in db: Database) throws -> [RecordTypeTable] {
        try String.fetchAll(db, sql: "SELECT record_type FROM ncs_table ORDER BY record_type").compactMap {
            try existing(for: $0, in: db)
        }
    }

    /// The record type's table, made if the store has none.
    static func table(for recordType: String, in db: Database) throws -> RecordTypeTable {
        if let table = try existing(for: recordType, in: db) { return table }
        let tableName = try freeName(for: recordType, in: db)
        let table = StoreSQL.identifier(tableName)
        let type = StoreSQL.literal(recordType)
        let trigger = { (suffix: String) in StoreSQL.identifier("ncs_\(tableName)_\(suffix)") }
        let refusal = StoreSQL.literal(
            "the rows of \(tableName) are the store's: change them through SyncStore (save or delete a model or a "
                + "record), which keeps the queue of changes to sync")
        try db.execute(
            sql: """
                CREATE TABLE \(table) (
                    _record_row INTEGER PRIMARY KEY,
                    _zone_key INTEGER NOT NULL,
                    _record_name TEXT NOT NULL,
                    _created_at REAL,
                    _modified_at REAL,
                    _inexact INTEGER NOT NULL DEFAULT 0,
                    UNIQUE (_zone_key, _record_name)
                );
                CREATE TRIGGER \(trigger("record_deleted")) AFTER DELETE ON ncs_record
                WHEN OLD.record_type = \(type) BEGIN
                    DELETE FROM \(table) WHERE _record_row = OLD.rowid;
                END;
                CREATE TRIGGER \(trigger("record_retyped")) AFTER UPDATE OF record_type ON ncs_record
                WHEN OLD.record_type = \(type) AND NEW.record_type IS NOT \(type) BEGIN
                    DELETE FROM \(table) WHERE _record_row = OLD.rowid;
                END;
                CREATE TRIGGER \(trigger("insert_refused")) BEFORE INSERT ON \(table)
                WHEN NOT \(StoreWriteGuard.functionName)() BEGIN SELECT RAISE(ABORT, \(refusal)); END;
                CREATE TRIGGER \(trigger("update_refused")) BEFORE UPDATE ON \(table)
                WHEN NOT \(StoreWriteGuard.functionName)() BEGIN SELECT RAISE(ABORT, \(refusal)); END;
                CREATE TRIGGER \(trigger("delete_refused")) BEFORE DELETE ON \(table)
                WHEN NOT \(StoreWriteGuard.functionName)() BEGIN SELECT RAISE(ABORT, \(refusal)); END;
                """)
        try db.execute(
            sql: "INSERT INTO ncs_table (record_type, table_name, columns) VALUES (?, ?, '')",
            arguments: [recordType, tableName])
        return RecordTypeTable(recordType: recordType, tableName: tableName, columns: [])
    }

    /// The record type as a table name, unless a table (or an index, a view, a trigger) has it, or it is a name
    /// SQLite or the store keeps for itself.
    private static func freeName(for recordType: String, in db: Database) throws -> String {
        // Every table of `ncs_table` is in the schema too.
        func inSchema(_ name: String) throws -> Bool {
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE lower(name) = ?)",
                arguments: [name.lowercased()]) == true
        }
        let reserved = ["sqlite_", "ncs_"].contains { recordType.lowercased().hasPrefix($0) }
        if !reserved, try !inSchema(recordType) { return recordType }
        var name = "ncs_type_" + recordType
        var attempt = 1
        while try inSchema(name) {
            attempt += 1
            name = "ncs_type_\(attempt)_" + recordType
        }
        return name
    }

    /// The table with columns for these fields too: each missing one added (declared as its kind when it is
    /// known), each known one given its kind if it had none.
    func adding(_ fields: [(field: String, kind: CloudValue.Kind?)], in db: Database) throws -> RecordTypeTable {
        var columns = self.columns
        var positions = self.positions
        for (field, kind) in fields {
            if let position = positions[field] {
                if columns[position].kind == nil, let kind { columns[position].kind = kind }
                continue
            }
            guard columns.count < Self.maximumColumns, Self.isColumnName(field) else { continue }
            let declared = kind.map { " " + ColumnValue.declaredType(of: $0) } ?? ""
            try db.execute(
                sql: "ALTER TABLE \(StoreSQL.identifier(tableName)) ADD COLUMN \(StoreSQL.identifier(field))\(declared)"
            )
            positions[field] = columns.count
            columns.append(Column(field: field, kind: kind))
        }
        guard columns != self.columns else { return self }
        try db.execute(
            sql: "UPDATE ncs_table SET columns = ? WHERE record_type = ?",
            arguments: [Self.encode(columns), recordType])
        return RecordTypeTable(recordType: recordType, tableName: tableName, columns: columns)
    }

    /// Whether a field can have a column: a name CloudKit accepts (letters, digits and underscores, starting with a
    /// letter; dots too, which flattened nested values use), so never a system column's.
    static func isColumnName(_ field: String) -> Bool { StoreSQL.isValidName(field) }

    // MARK: Rows

    /// Writes the row of a record the store just wrote in `ncs_record` (`row`), with the columns of its fields; adds
    /// the columns of fields the table doesn't have yet.
    static func write(
        _ record: CloudRecord, row: Int64, zoneKey: Int64, createdAt: Double?, modifiedAt: Double?, in db: Database
    ) throws {
        var table = try table(for: record.recordType, in: db)
        let missing = record.fields.compactMap { field, value -> (field: String, kind: CloudValue.Kind?)? in
            guard let position = table.positions[field] else { return (field, value.kind) }
            return table.columns[position].kind == nil ? (field, value.kind) : nil
        }
        if !missing.isEmpty { table = try table.adding(missing, in: db) }
        // As existentials: GRDB maps an array of values through a key path, which it makes again on every call.
        var values = [(any DatabaseValueConvertible)?](
            repeating: nil, count: Self.systemColumns.count + table.columns.count)
        var inexact = false
        for (field, value) in record.fields {
            // Past the table's limit, a name SQLite can't have, or a kind other than the column's: only the record
            // has the value, and a model reads the row from the record.
            guard let position = table.positions[field], table.columns[position].kind == value.kind else {
                inexact = true
                continue
            }
            let column = ColumnValue.column(of: value)
            values[Self.systemColumns.count + position] = column.value
            if !column.exact { inexact = true }
        }
        values[0] = row
        values[1] = zoneKey
        values[2] = record.id.recordName
        values[3] = createdAt
        values[4] = modifiedAt
        values[5] = inexact
        try db.cachedStatement(sql: table.upsertSQL).execute(arguments: StatementArguments(values))
    }
}
