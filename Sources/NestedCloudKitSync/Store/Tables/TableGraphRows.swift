import GRDB
import NestedCloudKitCodable

/// The models of the records a read's models reference, decoded from their rows a level of the graph at a time.
///
/// The read decodes its models from their rows. A model that asks for a referenced model not decoded yet names its
/// row as a holder of the field and the type asked for (``RowDecodingFallback/needsReferencedRows``). Once every
/// model of the level has been tried, ``fetchWanted()`` reads the targets of every holder named, through
/// `ncs_reference` (one statement for every holder), then the targets' rows from their tables by row number,
/// and decodes each as the types its holders' fields asked for, straight from the statement's rows. The models that
/// asked are then decoded again. A target whose own references lead further is kept (a copy of its row) and decoded
/// once the next level is read.
///
/// What a row can't give is read from the records instead (``RowDecodingFallback/rowNeedsRecord``): a target the
/// holder's references don't lead to (a record the store doesn't have), a reference to another zone, a row marked
/// `_inexact`, a model whose initializer refuses the row, and a cycle, which never completes a level.
///
/// One per read, used inside the read's transaction; not shared between threads.
final class TableGraphRows {
    /// A record, by zone and name: what a reference column names.
    struct Key: Hashable {
        let zoneKey: Int64
        let name: String
    }

    /// A record as a model type.
    private struct TypedKey: Hashable {
        let key: Key
        let type: ObjectIdentifier
    }

    /// A table's field asked for as a model type.
    private struct TypedField: Hashable {
        let field: TableField
        let type: ObjectIdentifier
    }

    /// A table's field, whose targets a model asked for as a type: the fields every holder of the table has.
    private struct TableField: Hashable {
        let table: String
        let field: String
    }

    /// How to decode a model type from a row, and keep it.
    private struct TypeDecoder {
        let type: ObjectIdentifier
        let decode: (_ fields: TableRowFields, _ key: Key) throws -> Void
        /// Makes room for this many more models of the type, before a level's are decoded.
        let reserve: (_ count: Int) -> Void
    }

    /// The types a table's field was asked for, and how many targets of the level being read it leads to.
    private final class LearnedField {
        var decoders: [TypeDecoder] = []
        var targets = 0
    }

    /// A target row kept until the next level (its own references weren't read yet).
    private struct Deferred {
        let row: Row
        let columns: TableRowColumns
        let key: Key
        let decoder: TypeDecoder
    }

    private let db: Database
    /// The models decoded, in a box per type (``ModelsOfType``).
    private var models: [ObjectIdentifier: AnyObject] = [:]
    private var failed: Set<TypedKey> = []
    private var pending: Set<TypedKey> = []
    private var deferred: [Deferred] = []
    /// The types each table's fields were asked for, in this read: a holder's targets are decoded as all of them.
    private var learned: [TableField: LearnedField] = [:]
    /// The holders asked for since the last fetch, with their tables.
    private var wanted: [Int64] = []
    private var wantedTables: [Int64: String] = [:]
    /// Each fetch's number, the fetch each holder's targets were read in, and the last fetch before each table's
    /// field was asked for as a type: a holder fetched after that has its targets of the field decoded as it.
    private var generation = 0
    private var fetchedAt: [Int64: Int] = [:]
    private var learnedAt: [TypedField: Int] = [:]
    private var holdersAcrossZones: Set<Int64> = []
    /// The columns of each table's statement, as ``TableRowDecoder`` reads them.
    private var columnsByTable: [String: TableRowColumns] = [:]

    /// How many levels of a graph a read decodes from rows; the models of deeper graphs are read from records.
    static let maximumDepth = 32

    init(in db: Database) {
        self.db = db
    }

    /// The models of one type, by record.
    private final class ModelsOfType<T> {
        var values: [Key: T] = [:]
    }

    private var lastBox: (type: ObjectIdentifier, box: AnyObject)?

    private func box<T>(of type: T.Type) -> ModelsOfType<T> {
        let id = ObjectIdentifier(T.self)
        // Nearly every lookup is of the type the one before was.
        if let lastBox, lastBox.type == id { return unsafeDowncast(lastBox.box, to: ModelsOfType<T>.self) }
        let box = models[id].map { unsafeDowncast($0, to: ModelsOfType<T>.self) } ?? ModelsOfType<T>()
        models[id] = box
        lastBox = (id, box)
        return box
    }

    /// Whether the last fetch left anything to do: holders asked for, or targets waiting for their own targets.
    var hasWork: Bool { !wanted.isEmpty || !deferred.isEmpty }

    /// The model of the record with a name in a zone, which a holder's field references; what it throws is raised
    /// in the holder's columns (``TableRowColumns/raise(_:)``).
    func model<T: Decodable>(
        _ type: T.Type, named name: String, zoneKey: Int64, holder: Int64, field: String,
        holderColumns: TableRowColumns
    ) throws -> T {
        let key = Key(zoneKey: zoneKey, name: name)
        if let model = box(of: T.self).values[key] {
            if !holdersAcrossZones.isEmpty, holdersAcrossZones.contains(holder) {
                throw holderColumns.raise(.rowNeedsRecord)
            }
            return model
        }
        // A class's instances are shared by the values that reference the same record, as the record's decoder
        // shares them.
        if T.self is AnyObject.Type { throw holderColumns.raise(.modelNeedsRecords) }
        let typed = TypedKey(key: key, type: ObjectIdentifier(T.self))
        if failed.contains(typed) || holdersAcrossZones.contains(holder) { throw holderColumns.raise(.rowNeedsRecord) }
        if pending.contains(typed) { throw holderColumns.raise(.needsReferencedRows) }
        let asked = TableField(table: holderColumns.tableName, field: field)
        // Fetched, and not there: a record the store doesn't have, or whose row can't be read.
        if let fetched = fetchedAt[holder], let learned = learnedAt[TypedField(field: asked, type: typed.type)],
            fetched > learned
        {
            throw holderColumns.raise(.rowNeedsRecord)
        }
        learn(T.self, for: asked)
        if wantedTables.updateValue(holderColumns.tableName, forKey: holder) == nil { wanted.append(holder) }
        throw holderColumns.raise(.needsReferencedRows)
    }

    /// Notes that a table's field gives models of a type, so its holders' targets are decoded as it.
    private func learn<T: Decodable>(_ type: T.Type, for field: TableField) {
        let id = ObjectIdentifier(T.self)
        let entry = learned[field] ?? LearnedField()
        learned[field] = entry
        guard !entry.decoders.contains(where: { $0.type == id }) else { return }
        learnedAt[TypedField(field: field, type: id)] = generation
        let decode = TableRowReading.decoder(for: T.self)
        // The box itself: a lookup by type would ask the run time for the box's generic type on every model.
        let box = box(of: T.self)
        entry.decoders.append(
            TypeDecoder(
                type: id, decode: { fields, key in box.values[key] = try decode(fields) },
                reserve: { box.values.reserveCapacity(box.values.count + $0) }))
    }

    /// Reads the targets of every holder asked for since the last time, the next level of the graph, and decodes
    /// them; then decodes again the targets kept from before, whose own targets this level may have brought.
    /// - Returns: Whether it read or decoded anything: if not, what is left waits on itself (a cycle).
    func fetchWanted() throws -> Bool {
        var progressed = !wanted.isEmpty
        generation += 1
        let holders = wanted
        for holder in holders { fetchedAt[holder] = generation }
        let tables = wantedTables
        wanted = []
        wantedTables = [:]
        let waiting = deferred
        deferred = []
        // The decoders of each target row, and the target rows of each record type.
        var decoders: [Int64: [TypeDecoder]] = [:]
        var rowsByType: [String: [Int64]] = [:]
        try RowNumbers.forEach(holders, in: db, sql: Self.targetsSQL) { row, _ in
            let holder = try row.decode(Int64.self, atIndex: 0)
            let field = try row.decode(String.self, atIndex: 1)
            // CloudKit keeps references inside a zone, and the columns hold only the target's name: a holder with a
            // reference to another zone is read from its record.
            if try row.decode(Bool.self, atIndex: 4) == false { holdersAcrossZones.insert(holder) }
            guard let table = tables[holder], let wanted = learned[TableField(table: table, field: field)] else {
                return
            }
            // A record the store doesn't have: its holders are read from their records.
            guard !row.hasNull(atIndex: 2), !row.hasNull(atIndex: 3) else { return }
            let target = try row.decode(Int64.self, atIndex: 2)
            wanted.targets += 1
            guard let known = decoders[target] else {
                // Nearly always the only decoders the target gets: the field's, shared, not copied.
                decoders[target] = wanted.decoders
                rowsByType[try row.decode(String.self, atIndex: 3), default: []].append(target)
                return
            }
            for decoder in wanted.decoders where !known.contains(where: { $0.type == decoder.type }) {
                decoders[target, default: []].append(decoder)
            }
        }
        // Room in each type's box for the level's models, made once rather than by doubling as they come.
        for field in learned.values where field.targets > 0 {
            for decoder in field.decoders { decoder.reserve(field.targets) }
            field.targets = 0
        }
        try decodeTargets(rowsByType, with: decoders)
        for target in waiting {
            if try decode(target.row, columns: target.columns, key: target.key, with: target.decoder, copying: false) {
                progressed = true
            }
        }
        return progressed
    }

    /// Reads the target rows of each record type, and decodes each as the types its holders' fields ask for.
    private func decodeTargets(_ rowsByType: [String: [Int64]], with decoders: [Int64: [TypeDecoder]]) throws {
        for (recordType, rows) in rowsByType {
            guard let table = try RecordTypeTable.existing(for: recordType, in: db) else { continue }
            let select = "SELECT * FROM \(StoreSQL.identifier(table.tableName)) WHERE _record_row IN "
            try RowNumbers.forEach(rows, in: db, sql: { select + $0 }) { row, statement in
                let columns = try columns(of: table, statement: statement)
                // The row is the statement's current one, until the next: its values are read from the statement.
                columns.statement = statement.sqliteStatement
                defer { columns.statement = nil }
                // System columns the store didn't write (a file changed behind it): the target isn't read from its
                // row, and its holders read their records.
                guard let zoneKey = try? columns.integer(in: row, at: columns.zoneKeyColumn),
                    let name = try? columns.recordName(in: row),
                    let inexactValue = try? columns.integer(in: row, at: columns.inexactColumn),
                    let recordRow = try? columns.integer(in: row, at: columns.recordRowColumn)
                else { return }
                let key = Key(zoneKey: zoneKey, name: name)
                let inexact = inexactValue != 0
                for decoder in decoders[recordRow] ?? [] {
                    if inexact {
                        failed.insert(TypedKey(key: key, type: decoder.type))
                    } else {
                        try decode(row, columns: columns, key: key, with: decoder, copying: true)
                    }
                }
            }
        }
    }

    /// Decodes a target row as a type and keeps the model; keeps the row (a copy, when it comes from a statement)
    /// if the model needs the next level, and notes the target as failed if the row can't give it.
    /// - Returns: Whether the model was decoded or found to fail, rather than kept for the next level.
    @discardableResult
    private func decode(_ row: Row, columns: TableRowColumns, key: Key, with decoder: TypeDecoder, copying: Bool)
        throws -> Bool
    {
        let typed = TypedKey(key: key, type: decoder.type)
        do {
            try columns.decodeRow(row, graph: self) { try decoder.decode($0, key) }
            if !pending.isEmpty { pending.remove(typed) }
            return true
        } catch RowDecodingFallback.needsReferencedRows {
            pending.insert(typed)
            deferred.append(Deferred(row: copying ? row.copy() : row, columns: columns, key: key, decoder: decoder))
            return false
        } catch RowDecodingFallback.modelNeedsRecords {
            throw RowDecodingFallback.modelNeedsRecords
        } catch {
            // The row can't give the model, or its initializer refuses it: its holders read their records, whose
            // decoder reads it or says what is wrong.
            pending.remove(typed)
            failed.insert(typed)
            return true
        }
    }

    private func columns(of table: RecordTypeTable, statement: Statement) throws -> TableRowColumns {
        if let columns = columnsByTable[table.tableName] { return columns }
        guard let columns = TableRowColumns(statementColumns: statement.columnNames, table: table) else {
            throw RowDecodingFallback.modelNeedsRecords
        }
        columnsByTable[table.tableName] = columns
        return columns
    }

    /// Each reference of the holders: the holder and the field, the target's row and type (`NULL` for a record the
    /// store doesn't have), and whether the target is in the holder's zone.
    private static func targetsSQL(_ holders: String) -> String {
        """
        SELECT r.holder_row, r.field, r.target_row, t.record_type,
            r.target_zone_owner = r.holder_zone_owner AND r.target_zone_name = r.holder_zone_name
        FROM ncs_reference r LEFT JOIN ncs_record t ON t.rowid = r.target_row
        WHERE r.holder_row IN \(holders)
        """
    }

    /// The record names of a reference list's column (``FieldProjection``: a JSON array of strings); `nil` for one
    /// with an escaped character, which the record reads instead.
    static func names(inList json: String) -> [String]? {
        var names: [String] = []
        var utf8 = json.utf8[...]
        guard utf8.popFirst() == UInt8(ascii: "["), utf8.popLast() == UInt8(ascii: "]") else { return nil }
        while !utf8.isEmpty {
            guard utf8.popFirst() == UInt8(ascii: "\""),
                let end = utf8.firstIndex(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }),
                utf8[end] == UInt8(ascii: "\"")
            else { return nil }
            names.append(String(Substring(utf8[..<end])))
            utf8 = utf8[utf8.index(after: end)...]
            if utf8.isEmpty { break }
            guard utf8.popFirst() == UInt8(ascii: ","), !utf8.isEmpty else { return nil }
        }
        return names
    }
}
