import GRDB
import NestedCloudKitCodable

/// The rows of the records a read of models references, fetched a level of the graph at a time from their record
/// types' tables, and the models decoded from them.
///
/// The read decodes its models from their rows; a model that asks for a record whose row isn't here yet names its
/// row as a holder (``RowDecodingFallback/needsReferencedRows``), and once every model of the level has been tried,
/// ``fetchWanted()`` reads the targets of every holder named, through `ncs_reference`, a few hundred holders per
/// statement: a level in a handful of statements, as ``StoreGraphReader`` reads records. The models that asked are
/// then decoded again. A target a holder's references don't lead to, a reference to another zone, a cycle or a
/// graph deeper than a read follows is read from the records instead (``RowDecodingFallback/rowNeedsRecord``).
///
/// One per read, used inside the read's transaction; not shared between threads.
final class TableGraphRows {
    private struct Key: Hashable {
        let zoneKey: Int64
        let name: String
    }

    private struct Target {
        let row: Row
        let columns: TableRowColumns
    }

    private let db: Database
    private var targets: [Key: Target] = [:]
    /// The holders whose targets were fetched, and those among them with a reference to another zone.
    private var fetchedHolders: Set<Int64> = []
    private var holdersAcrossZones: Set<Int64> = []
    private var wanted: [Int64] = []
    private var wantedSet: Set<Int64> = []
    /// The rows fetched, so that a record several holders reference is fetched once.
    private var fetchedRows: Set<Int64> = []
    /// The columns of each table's statement, as ``TableRowDecoder`` reads them.
    private var columnsByTable: [String: TableRowColumns] = [:]
    /// The records whose models are being decoded, from the root down: a record among them is a cycle.
    private var decoding: [Key] = []

    /// How deep a graph's models follow each other from their rows; deeper ones are read from their records.
    static let maximumDepth = 32

    init(in db: Database) {
        self.db = db
    }

    /// Whether a model asked for a row that isn't fetched yet.
    var wantsMore: Bool { !wanted.isEmpty }

    /// Asks for the targets of a holder's references, unless they were fetched.
    func want(_ holder: Int64) {
        guard !fetchedHolders.contains(holder), wantedSet.insert(holder).inserted else { return }
        wanted.append(holder)
    }

    /// The model of the record with a name in a zone, which the holder's row references; what it throws is raised
    /// in the holder's columns (``TableRowColumns/raise(_:)``).
    func model<T: Decodable>(
        _ type: T.Type, named name: String, zoneKey: Int64, holder: Int64, raising columns: TableRowColumns
    ) throws -> T {
        // A class's instances are shared by the values that reference the same record, as the record's decoder
        // shares them.
        if T.self is AnyObject.Type { throw columns.raise(.modelNeedsRecords) }
        let key = Key(zoneKey: zoneKey, name: name)
        guard let target = targets[key] else {
            guard fetchedHolders.contains(holder) else {
                want(holder)
                throw columns.raise(.needsReferencedRows)
            }
            throw columns.raise(.rowNeedsRecord)
        }
        guard !holdersAcrossZones.contains(holder), decoding.count < Self.maximumDepth, !decoding.contains(key),
            try target.row.decode(Int64.self, atIndex: target.columns.inexactColumn) == 0
        else { throw columns.raise(.rowNeedsRecord) }
        decoding.append(key)
        defer { decoding.removeLast() }
        let fields = TableRowFields(row: target.row, columns: target.columns, graph: self)
        do {
            return try target.columns.reading { try TableRowReading.decode(T.self, from: fields) }
        } catch let fallback as RowDecodingFallback {
            throw columns.raise(fallback)
        }
    }

    /// Fetches the targets of every holder asked for since the last time: the next level of the graph.
    func fetchWanted() throws {
        let holders = wanted
        wanted = []
        wantedSet = []
        fetchedHolders.formUnion(holders)
        var rowsByType: [String: [Int64]] = [:]
        try RowBatches.forEach(holders, in: db, sql: Self.targetsSQL) { row, _ in
            let holder: Int64 = try row.decode(Int64.self, atIndex: 0)
            // CloudKit keeps references inside a zone, and the columns hold only the target's name: a holder
            // with a reference to another zone is read from its record.
            if try row.decode(Bool.self, atIndex: 3) == false { holdersAcrossZones.insert(holder) }
            guard !row.hasNull(atIndex: 1), !row.hasNull(atIndex: 2) else { return }
            let target = try row.decode(Int64.self, atIndex: 1)
            if fetchedRows.insert(target).inserted {
                rowsByType[try row.decode(String.self, atIndex: 2), default: []].append(target)
            }
        }
        for (recordType, rows) in rowsByType {
            guard let table = try RecordTypeTable.existing(for: recordType, in: db) else { continue }
            let select = "SELECT * FROM \(StoreSQL.identifier(table.tableName)) WHERE _record_row IN "
            try RowBatches.forEach(rows, in: db, sql: { select + $0 }) { row, statement in
                let columns = try columns(of: table, statement: statement)
                let key = Key(
                    zoneKey: try row.decode(Int64.self, atIndex: columns.zoneKeyColumn),
                    name: try row.decode(String.self, atIndex: columns.nameColumn))
                targets[key] = Target(row: row.copy(), columns: columns)
            }
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

    /// Each reference of the holders: the holder, the target's row and type (`NULL` for a record the store
    /// doesn't have), and whether the target is in the holder's zone.
    private static func targetsSQL(_ holders: String) -> String {
        """
        SELECT r.holder_row, r.target_row, t.record_type,
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
