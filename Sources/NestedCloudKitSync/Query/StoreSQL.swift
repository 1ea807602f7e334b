import Foundation
import GRDB
import NestedCloudKitCodable

/// Turns queries and index declarations into SQL over the record type's table (``RecordTypeTable``).
///
/// A field is its column (`"Note"."title"`), or NULL for a field no record of the type has had; the system fields
/// are the system columns (`_created_at`, `_modified_at`, `_record_name`). An index declares the same columns,
/// which is what lets SQLite use it for a query.
enum StoreSQL {
    struct Statement {
        var sql: String
        var arguments: StatementArguments
    }

    /// What a query selects: the table's rows (every column, for ``TableRowReading``), the records of the rows
    /// (and their rows in `ncs_record`), a count, or whether one exists.
    enum Selection {
        case rows
        case records
        case count
        case exists
    }

    /// The record type a query reads: the one it names, or the model's type's name.
    static func recordType<Model: QueryableModel>(of query: ModelQuery<Model>) -> String {
        query.recordType ?? recordType(named: Model.self)
    }

    /// The statement of a query over its record type's table: a table with no columns for a type the store has no
    /// table for, which checks the query as any other (and isn't run).
    static func statement<Model: QueryableModel>(
        for query: ModelQuery<Model>, selecting selection: Selection, storeZone: CloudRecord.ZoneID,
        table: RecordTypeTable
    ) throws -> Statement {
        let recordType = recordType(of: query)
        let zone = query.zoneID ?? storeZone
        var checker = FieldChecker<Model>(recordType: recordType)
        var arguments: StatementArguments = [zone.ownerName, zone.zoneName]
        let name = identifier(table.tableName)
        var sql: String
        switch selection {
        case .rows: sql = "SELECT * FROM \(name)"
        case .records:
            sql =
                "SELECT ncs_record.record, ncs_record.rowid FROM \(name) JOIN ncs_record ON ncs_record.rowid = \(name)._record_row"
        case .count: sql = "SELECT COUNT(*) FROM \(name)"
        case .exists: sql = "SELECT EXISTS (SELECT 1 FROM \(name)"
        }
        // The zone by its number, which the declared indexes lead with; a zone the store never wrote has none, and
        // no record.
        sql += " WHERE \(name)._zone_key = (SELECT key FROM ncs_zone_key WHERE zone_owner = ? AND zone_name = ?)"
        if let filter = query.filter {
            sql +=
                " AND "
                + (try condition(filter.node, zone: zone, table: table, checker: &checker, arguments: &arguments))
        }
        // Checked whatever is selected: a count of a misspelt sort is as wrong as a fetch of it.
        for key in query.sortOrder { try checker.check(key.field.target) }
        guard query.offset >= 0, (query.limit ?? 0) >= 0 else {
            throw SyncError.invalidQuery(
                "the limit and offset of a query of \(recordType) can't be negative (limit \(query.limit ?? 0), "
                    + "offset \(query.offset))")
        }
        switch selection {
        case .rows, .records:
            var terms: [String] = []
            for key in query.sortOrder {
                terms.append(expression(key.field.target, table: table) + (key.descending ? " DESC" : ""))
            }
            // Equal keys by record name, ascending whatever the keys' direction: a stable order a reader expects.
            // An index whose columns run as the keys do (and end with the record's name) gives it without sorting.
            terms.append("\(name)._record_name")
            sql += " ORDER BY " + terms.joined(separator: ", ") + limitClause(query, arguments: &arguments)
        case .count:
            break
        case .exists:
            // The limit and offset count here too: a page past the last match holds nothing.
            sql += limitClause(query, arguments: &arguments) + ")"
        }
        return Statement(sql: sql, arguments: arguments)
    }

    /// The limit and offset as parameters: the store caches each query's statement, and a page of another offset
    /// is the same statement, not one more in the cache.
    private static func limitClause<Model>(_ query: ModelQuery<Model>, arguments: inout StatementArguments) -> String {
        guard query.limit != nil || query.offset > 0 else { return "" }
        arguments += [query.limit ?? -1, query.offset]
        return " LIMIT ? OFFSET ?"
    }

    private static func condition<Model>(
        _ node: ModelFilter<Model>.Node, zone: CloudRecord.ZoneID, table: RecordTypeTable,
        checker: inout FieldChecker<Model>, arguments: inout StatementArguments
    ) throws -> String {
        func expression(_ target: QueryField<Model>.Target) -> String { Self.expression(target, table: table) }
        switch node {
        case .compare(let target, let comparison, let value):
            try checker.check(target)
            arguments += [try argument(value, for: target, checker: checker)]
            return "\(expression(target)) \(comparison.rawValue) ?"
        case .isIn(let target, let values, let negated):
            try checker.check(target)
            // An empty list: no value is in it, so `isIn` holds for no set field and `notIn` for every one; a
            // field that isn't set stays unknown (NULL), so that `!` of either doesn't find it either.
            guard !values.isEmpty else {
                return "CASE WHEN \(expression(target)) IS NULL THEN NULL ELSE \(negated ? 1 : 0) END"
            }
            for value in values { arguments += [try argument(value, for: target, checker: checker)] }
            let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
            return "\(expression(target)) \(negated ? "NOT IN" : "IN") (\(marks))"
        case .beginsWith(let target, let prefix):
            try checker.check(target)
            let field = expression(target)
            // The range term lets an index narrow the scan; the substr term makes the match exact.
            arguments += [prefix, prefix.unicodeScalars.count, prefix]
            return "(\(field) >= ? AND substr(\(field), 1, ?) = ?)"
        case .listContains(let target, let value):
            try checker.check(target)
            guard case .field = target else {
                throw SyncError.invalidQuery(
                    "\(checker.recordType).\(QueryField<Model>(target: target).name) isn't a list; use equals(_:_:)")
            }
            arguments += [try argument(value, for: target, checker: checker)]
            return "CASE WHEN \(expression(target)) IS NULL THEN NULL ELSE EXISTS (SELECT 1 FROM "
                + "json_each(\(expression(target))) WHERE value = ?) END"
        case .references(let target, let recordID):
            return try referencesCondition(
                target, recordID, zone: zone, table: table, checker: &checker, arguments: &arguments)
        case .isNil(let target, let isNil):
            try checker.check(target)
            return "\(expression(target)) \(isNil ? "IS NULL" : "IS NOT NULL")"
        case .and(let nodes), .or(let nodes):
            let isAnd = if case .and = node { true } else { false }
            // An empty conjunction holds, an empty disjunction doesn't.
            guard !nodes.isEmpty else { return isAnd ? "1" : "0" }
            let terms = try nodes.map {
                try condition($0, zone: zone, table: table, checker: &checker, arguments: &arguments)
            }
            return "(" + terms.joined(separator: isAnd ? " AND " : " OR ") + ")"
        case .not(let node):
            return "NOT ("
                + (try condition(node, zone: zone, table: table, checker: &checker, arguments: &arguments)) + ")"
        case .invalid(let reason):
            throw SyncError.invalidQuery(reason)
        }
    }

    /// Whether a reference field points to `recordID`, through the store's reference table (which an index serves),
    /// and unknown (NULL) where the field isn't set.
    private static func referencesCondition<Model>(
        _ target: QueryField<Model>.Target, _ recordID: CloudRecord.ID, zone: CloudRecord.ZoneID,
        table: RecordTypeTable, checker: inout FieldChecker<Model>, arguments: inout StatementArguments
    ) throws -> String {
        try checker.check(target)
        guard case .field(let name, _) = target else {
            throw SyncError.invalidQuery(
                "\(checker.recordType).\(QueryField<Model>(target: target).name) isn't a reference field; name a "
                    + "field that holds references")
        }
        let field = expression(target, table: table)
        let targetZone = recordID.zoneID == QueryZone.placeholder ? zone : recordID.zoneID
        arguments += [
            zone.ownerName, zone.zoneName, name, targetZone.ownerName, targetZone.zoneName, recordID.recordName,
        ]
        return "CASE WHEN \(field) IS NULL THEN NULL ELSE \(identifier(table.tableName))._record_name IN ("
            + "SELECT holder_name FROM ncs_reference WHERE holder_zone_owner = ? "
            + "AND holder_zone_name = ? AND field = ? AND target_zone_owner = ? "
            + "AND target_zone_name = ? AND target_name = ?) END"
    }

    /// A value as SQLite compares it with a field's projection.
    private static func argument<Model>(
        _ value: CloudValue, for target: QueryField<Model>.Target, checker: FieldChecker<Model>
    ) throws -> DatabaseValue {
        switch value {
        case .string(let value): return value.databaseValue
        case .int64(let value): return value.databaseValue
        case .double(let value) where value.isFinite: return value.databaseValue
        case .date(let value): return value.timeIntervalSince1970.databaseValue
        case .reference(let reference): return reference.recordID.recordName.databaseValue
        default:
            throw SyncError.invalidQuery(
                "\(checker.recordType).\(QueryField<Model>(target: target).name) can't be compared with a "
                    + "\(value.kind.rawValue) value; compare strings, numbers, dates and references, test lists "
                    + "with contains(_:_:) and anything else with isNil(_:)")
        }
    }

    // MARK: Expressions

    /// A field or system field of a query, in the table's columns.
    static func expression<Model>(_ target: QueryField<Model>.Target, table: RecordTypeTable) -> String {
        let name = identifier(table.tableName)
        switch target {
        case .field(let field, _): return table.expression(ofField: field)
        case .creationDate: return name + "._created_at"
        case .modificationDate: return name + "._modified_at"
        case .recordName: return name + "._record_name"
        }
    }

    /// A column of an index: the field's column (which the declaration adds to the table if needed), or a system
    /// column.
    static func column(_ key: StoreIndex.Key) -> String {
        switch key {
        case .field(let field): identifier(field)
        case .creationDate: "_created_at"
        case .modificationDate: "_modified_at"
        case .recordName: "_record_name"
        }
    }

    /// A name as an SQL identifier: quoted, so that any record type or field is one name.
    static func identifier(_ name: String) -> String { quoted(name, by: UInt8(ascii: "\"")) }

    /// A string as an SQL literal.
    static func literal(_ text: String) -> String { quoted(text, by: UInt8(ascii: "'")) }

    /// Text between quotes, each quote in it doubled, byte by byte (a quote followed by a combining mark is one
    /// `Character`, and still a quote to SQLite). Foundation's replacement bridges to `NSString` on Linux, a sixth
    /// of a read by ID when every read named its table so: a name without a quote is only enclosed.
    private static func quoted(_ text: String, by quote: UInt8) -> String {
        let mark = String(decoding: [quote], as: UTF8.self)
        guard text.utf8.contains(quote) else { return mark + text + mark }
        var bytes = [quote]
        for byte in text.utf8 {
            if byte == quote { bytes.append(quote) }
            bytes.append(byte)
        }
        bytes.append(quote)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The record type of a model type's records unless it declares another: its name, which
    /// `String(describing:)` asks the run time for on every call (a tenth of a read by ID); found once per type.
    static func recordType<Model>(named type: Model.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = typeNames.withLock({ $0[key] }) { return name }
        let name = String(describing: type)
        typeNames.withLock { $0[key] = name }
        return name
    }

    private static let typeNames = Locked<[ObjectIdentifier: String]>([:])

    /// Whether a name is one CloudKit accepts for a record type or field (and so safe in a JSON path): ASCII
    /// letters, digits and underscores, starting with a letter; dots too, which flattened nested values use.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII
                && ($0 == "_" || $0 == "." || $0.properties.isAlphabetic
                    || ("0"..."9").contains($0))
        }
    }

    /// FNV-1a over the text's bytes, in hex: stable across runs and platforms, unlike `Hasher`.
    static func stableHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}

/// Checks the field names a query gives as strings against the fields the model decodes, probed once per query
/// and only if a query names a field by a string.
struct FieldChecker<Model: QueryableModel> {
    let recordType: String
    private var probed = false
    /// The model's fields; `nil` for a model whose initializer can't be probed, which accepts any well-formed name.
    private var names: Set<String>?

    init(recordType: String) { self.recordType = recordType }

    mutating func check(_ target: QueryField<Model>.Target) throws {
        guard case .field(let name, checked: false) = target else { return }
        guard StoreSQL.isValidName(name) else {
            throw SyncError.invalidQuery("\"\(name)\" isn't a field name of \(recordType)")
        }
        if !probed {
            names = CKRecordDecoder.fieldNames(decodedBy: Model.self)
            probed = true
        }
        guard let names, !names.contains(name) else { return }
        throw SyncError.invalidQuery(
            "\(Model.self) has no field \"\(name)\" (its fields: \(names.sorted().joined(separator: ", "))); "
                + "check the spelling, or name the field by its coding key so the compiler checks it")
    }
}
