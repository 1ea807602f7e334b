import Foundation
import GRDB
import NestedCloudKitCodable

/// The columns of a statement over a record type's table, as ``TableRowDecoder`` reads them: each field's column
/// and kind, and the order the model asked for its fields in the row before, so that the next row finds each
/// column by comparing a name instead of hashing it.
///
/// One per read, used on the read's thread only, and one row at a time: it holds the row being decoded, so that the
/// values a model reads (``TableRowFields``, ``CloudRecordRow``) are one reference to pass, not three.
///
/// Its state is read and written on every field of every row: `@exclusivity(unchecked)`, as nothing reaches it
/// from two places at once (a read decodes one row at a time), spares the run-time check of each access.
final class TableRowColumns {
    /// The statement's column of each field.
    private let columns: [String: Int]
    /// The kind of each of the statement's columns (`nil` for a system column, or a field no record had).
    let kinds: [CloudValue.Kind?]
    /// The system columns' places in the statement (every statement over a table selects them all, `SELECT *`).
    let nameColumn: Int
    let recordRowColumn: Int
    let zoneKeyColumn: Int
    let inexactColumn: Int
    /// The fields asked for in the last row, in order, with their columns (`nil`: the table has none).
    @exclusivity(unchecked) private var order: [(field: String, column: Int?)] = []
    @exclusivity(unchecked) private var next = 0

    /// The table's name, for ``TableGraphRows``'s learning of which models its references give.
    let tableName: String

    /// The statement whose current row is the row being read, or `nil` for a row copied out of its statement: its
    /// values are read straight from SQLite's statement, a call per column, where a row's subscript makes several.
    /// Set by the read before each row it decodes (a table's columns serve every statement over the table).
    @exclusivity(unchecked) var statement: SQLiteStatement?

    /// The row being decoded (``decodeRow(_:graph:_:)``).
    @exclusivity(unchecked) private(set) var row = Row()
    /// The rows of the records the read references, while a row is decoded; `nil` for a read of rows one at a time
    /// from a cursor, which can't follow references: there, a reference throws
    /// ``RowDecodingFallback/needsReferencedRows`` and the read starts again with the rows of its graph.
    @exclusivity(unchecked) private(set) var graph: TableGraphRows?

    /// `nil` if the statement doesn't select the system columns.
    init?(statementColumns names: [String], table: RecordTypeTable) {
        // A statement of every column has the table's layout; any other, one of its own.
        guard
            let layout = names == table.layout?.names
                ? table.layout : TableRowLayout(names: names, fields: table.columns, positions: table.positions)
        else { return nil }
        columns = layout.columns
        kinds = layout.kinds
        nameColumn = layout.nameColumn
        recordRowColumn = layout.recordRowColumn
        zoneKeyColumn = layout.zoneKeyColumn
        inexactColumn = layout.inexactColumn
        tableName = table.tableName
    }

    /// The fallback the decoding of the current row threw, which a model's initializer may have caught (`try?`):
    /// a model decoded with one raised is read as if it had been thrown.
    @exclusivity(unchecked) private(set) var raised: RowDecodingFallback?

    /// Records a fallback as raised, and gives it to throw.
    func raise(_ fallback: RowDecodingFallback) -> RowDecodingFallback {
        raised = fallback
        return fallback
    }

    /// Decodes a model from a row of the statement: its fields looked up in the order of the row before, and a
    /// fallback the model's initializer caught thrown as if it hadn't been.
    func decodeRow<T>(_ row: Row, graph: TableGraphRows?, _ decode: (TableRowFields) throws -> T) throws -> T {
        self.row = row
        self.graph = graph
        next = 0
        raised = nil
        // The graph holds the columns of its tables: not held back, or neither would go.
        defer { self.graph = nil }
        let value = try decode(TableRowFields(columns: self))
        if let raised { throw raised }
        return value
    }

    /// The statement's column of a field, or `nil` if the table has none.
    func column(of field: String) -> Int? {
        if next < order.count, order[next].field == field {
            next += 1
            return order[next - 1].column
        }
        let column = columns[field]
        if next < order.count { order.removeSubrange(next...) }
        order.append((field, column))
        next += 1
        return column
    }

    /// Every field with a column, for `allKeys`.
    var fields: [(field: String, column: Int)] { columns.map { ($0.key, $0.value) } }

    /// The value of one of the row's columns: from the statement when the row is its current row, else from the row.
    @inline(__always)
    func value(in row: Row, at column: Int) throws -> DatabaseValue.Storage {
        if let statement { return DatabaseValue(sqliteStatement: statement, index: CInt(column)).storage }
        // By position, as a collection: `decode(DatabaseValue.self, atIndex:)` is generic code that GRDB runs
        // unspecialized, a tenth of a graph's read.
        guard column < row.count else { throw RowDecodingFallback.rowNeedsRecord }
        return row[row.startIndex.advanced(by: column)].1.storage
    }

    /// An integer system column's value (the row's record row, its zone, whether it is inexact).
    func integer(in row: Row, at column: Int) throws -> Int64 {
        guard case .int64(let value) = try value(in: row, at: column) else { throw RowDecodingFallback.rowNeedsRecord }
        return value
    }

    /// The row's record name.
    func recordName(in row: Row) throws -> String {
        guard case .string(let name) = try value(in: row, at: nameColumn) else {
            throw RowDecodingFallback.rowNeedsRecord
        }
        return name
    }
}

/// What a generated mapping reads (``CloudRecordRow``): the row being decoded, through one class reference, which
/// the row holds without a box of its own.
extension TableRowColumns: CloudRecordRowSource {
    func string(_ field: String) throws -> String? { try TableRowFields(columns: self).string(field) }
    func bool(_ field: String) throws -> Bool? { try TableRowFields(columns: self).bool(field) }
    func integer(_ field: String) throws -> Int? { try TableRowFields(columns: self).integer(field) }
    func int64(_ field: String) throws -> Int64? { try TableRowFields(columns: self).int64(field) }
    func double(_ field: String) throws -> Double? { try TableRowFields(columns: self).double(field) }
    func date(_ field: String) throws -> Date? { try TableRowFields(columns: self).date(field) }
    func data(_ field: String) throws -> Data? { try TableRowFields(columns: self).data(field) }
    func value<Value: Decodable>(_ type: Value.Type, _ field: String, required: Bool) throws -> Value? {
        try TableRowFields(columns: self).value(type, field, required: required)
    }
    func missing(_ field: String) -> any Error { TableRowFields(columns: self).missing(field) }
}
