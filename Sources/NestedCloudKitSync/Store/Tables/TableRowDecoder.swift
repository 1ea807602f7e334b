import Foundation
import GRDB
import NestedCloudKitCodable

/// Why a model isn't read from its table's row, and is read from its record instead.
enum RowDecodingFallback: Error {
    /// The model's type reads what a row never holds exactly (a nested value, a model it references, a list, an
    /// asset, its system fields): its reads take records from then on (``TableRowReading``).
    case modelNeedsRecords
    /// The row doesn't hold what the model reads (a field it has no value for, a row marked `_inexact`): this
    /// model is read from its record, whose decoder reads the value or says exactly what is wrong.
    case rowNeedsRecord
    /// The row references a record whose row the read hasn't fetched: the read fetches the next level of the graph
    /// (``TableGraphRows``) and decodes the model again.
    case needsReferencedRows
}

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

/// A `Decoder` over one row of a record type's table: what the store's decoder would read from the row's record,
/// read from its columns, for the values the columns hold exactly (``ColumnValue/isReadable(_:)``): strings,
/// integers and Booleans, doubles, dates and bytes, optional or not, values that decode from one of them (an
/// enumeration with raw values), and the models a reference or a reference list points to, from their own rows
/// (``TableGraphRows``). A missing `id` field is the record's name, as for a record.
///
/// Anything else throws a ``RowDecodingFallback``, and the model is read from its record: the row decoder never
/// decides what a value means differently from the record's decoder, it only reads the common ones faster.
struct TableRowDecoder: Decoder {
    let fields: TableRowFields

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(TableRowKeyedContainer<Key>(fields: fields))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw fields.columns.raise(.modelNeedsRecords) }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw fields.columns.raise(.modelNeedsRecords)
    }
}

/// The values of one row, by field: what both a `Codable` model's keyed container and a generated mapping
/// (``CloudRecordRow``) read, outside of any generic context. The container is generic over the model's keys,
/// which the store's module can't specialize; code in it looks its own type's metadata up at run time on every
/// call.
///
/// One reference, the read's columns, which hold the row being decoded.
struct TableRowFields {
    let columns: TableRowColumns

    var row: Row { columns.row }
    var graph: TableGraphRows? { columns.graph }

    /// The column of a field if the row has a value for it, else `nil`.
    func column(_ field: String) -> Int? {
        guard let column = columns.column(of: field), let value = try? columns.value(in: row, at: column) else {
            return nil
        }
        if case .null = value { return nil }
        return column
    }

    /// The value of a field's column, with the column, or `nil` if the table has no column for it or the row no
    /// value; a column of another kind (``ColumnValue``) is read as the record's decoder reads it (a double from an
    /// integer, say), or refused: from the record.
    @inline(__always)
    private func stored(_ field: String, kind: CloudValue.Kind) throws -> DatabaseValue.Storage? {
        guard let column = columns.column(of: field) else { return nil }
        let value = try columns.value(in: row, at: column)
        if case .null = value { return nil }
        guard columns.kinds[column] == kind else { throw columns.raise(.modelNeedsRecords) }
        return value
    }

    func string(_ field: String) throws -> String? {
        guard let value = try stored(field, kind: .string) else {
            return field == "id" ? try columns.recordName(in: row) : nil
        }
        // Only the store writes the rows, each value as its column's kind: another is a file changed behind it.
        guard case .string(let string) = value else { throw columns.raise(.rowNeedsRecord) }
        return string
    }

    func int64(_ field: String) throws -> Int64? {
        guard let value = try stored(field, kind: .int64) else { return nil }
        guard case .int64(let integer) = value else { throw columns.raise(.rowNeedsRecord) }
        return integer
    }

    func integer(_ field: String) throws -> Int? { try integer(field, as: Int.self) }

    /// An integer the row must have.
    func requiredInteger<T: FixedWidthInteger>(_ field: String) throws -> T {
        guard let value = try integer(field, as: T.self) else { throw columns.raise(.rowNeedsRecord) }
        return value
    }

    func integer<T: FixedWidthInteger>(_ field: String, as type: T.Type) throws -> T? {
        guard let value = try int64(field) else { return nil }
        guard let integer = T(exactly: value) else { throw columns.raise(.rowNeedsRecord) }
        return integer
    }

    func bool(_ field: String) throws -> Bool? {
        guard let value = try int64(field) else { return nil }
        guard value == 0 || value == 1 else { throw columns.raise(.rowNeedsRecord) }
        return value == 1
    }

    func double(_ field: String) throws -> Double? {
        guard let value = try stored(field, kind: .double) else { return nil }
        guard case .double(let double) = value else { throw columns.raise(.rowNeedsRecord) }
        return double
    }

    func date(_ field: String) throws -> Date? {
        guard let value = try stored(field, kind: .date) else { return nil }
        guard case .double(let seconds) = value else { throw columns.raise(.rowNeedsRecord) }
        // The dates CloudKit can store (JavaScript's range), as the record's decoder checks.
        guard seconds.isFinite, abs(seconds) <= 8.64e12 else { throw columns.raise(.rowNeedsRecord) }
        return Date(timeIntervalSince1970: seconds)
    }

    /// A date the row must have.
    func requiredDate(_ field: String) throws -> Date {
        guard let date = try date(field) else { throw columns.raise(.rowNeedsRecord) }
        return date
    }

    /// Bytes the row must have.
    func requiredData(_ field: String) throws -> Data {
        guard let data = try data(field) else { throw columns.raise(.rowNeedsRecord) }
        return data
    }

    func data(_ field: String) throws -> Data? {
        guard let value = try stored(field, kind: .bytes) else { return nil }
        guard case .blob(let data) = value else { throw columns.raise(.rowNeedsRecord) }
        return data
    }

    func missing(_ field: String) -> any Error { columns.raise(.rowNeedsRecord) }

    /// A value of a type the row reads; `.some(nil)` for a missing one; `nil` for a type it doesn't read itself.
    func known<T>(_ type: T.Type, _ field: String) throws -> T?? {
        // Each value is of the type just compared with `T`: a cast would look the types up again.
        func typed<V>(_ value: V?) -> T?? { .some(value.map { unsafeBitCast($0, to: T.self) }) }
        if T.self == String.self { return typed(try string(field)) }
        if T.self == Date.self { return typed(try date(field)) }
        if T.self == Int.self { return typed(try integer(field, as: Int.self)) }
        if T.self == Bool.self { return typed(try bool(field)) }
        if T.self == Double.self { return typed(try double(field)) }
        if T.self == Data.self { return typed(try data(field)) }
        if T.self == Int64.self { return typed(try int64(field)) }
        if T.self == Int32.self { return typed(try integer(field, as: Int32.self)) }
        if T.self == Int16.self { return typed(try integer(field, as: Int16.self)) }
        if T.self == Int8.self { return typed(try integer(field, as: Int8.self)) }
        if T.self == UInt.self { return typed(try integer(field, as: UInt.self)) }
        if T.self == UInt64.self { return typed(try integer(field, as: UInt64.self)) }
        if T.self == UInt32.self { return typed(try integer(field, as: UInt32.self)) }
        if T.self == UInt16.self { return typed(try integer(field, as: UInt16.self)) }
        if T.self == UInt8.self { return typed(try integer(field, as: UInt8.self)) }
        return nil
    }

    /// Any other value: a model a reference points to, a list of them, or a value that decodes from one column;
    /// `nil` for a missing field, but a missing list is an empty one when `required` (CloudKit stores no empty
    /// list, and the record's decoder reads a missing one so).
    func value<T: Decodable>(_ type: T.Type, _ field: String, required: Bool) throws -> T? {
        if let known = try known(type, field) { return known }
        if T.self is any CKDecodable.Type { return try referenced(type, field) }
        guard !Self.isReadFromRecords(type) else { throw columns.raise(.modelNeedsRecords) }
        if T.self is any Collection.Type { return try list(type, field, required: required) }
        guard column(field) != nil else {
            // A missing `id` of another type than a string is read from the record name by the record's decoder.
            if field == "id" { throw columns.raise(.rowNeedsRecord) }
            return nil
        }
        return try T(from: TableRowValueDecoder(fields: self, field: field))
    }

    func value<T: Decodable>(_ type: T.Type, _ field: String) throws -> T? { try value(type, field, required: false) }

    func requiredValue<T: Decodable>(_ type: T.Type, _ field: String) throws -> T {
        guard let value = try value(type, field, required: true) else { throw columns.raise(.rowNeedsRecord) }
        return value
    }

    /// Whether the record's decoder reads a type in a way of its own (a file, a location, a number kept as text,
    /// the record's system fields), which a row doesn't hold.
    static func isReadFromRecords<T>(_ type: T.Type) -> Bool {
        T.self == URL.self || T.self == UUID.self || T.self == Decimal.self || T.self == Float.self
            || T.self == CloudLocation.self || T.self == CloudReference.self || T.self == CloudAsset.self
            || T.self == CloudRecord.SystemFields.self || T.self == CloudRecord.SystemFields?.self
    }

    // MARK: References

    /// The model a reference field points to, read from its row; `nil` if the field is missing.
    private func referenced<T: Decodable>(_ type: T.Type, _ field: String) throws -> T? {
        guard let value = try stored(field, kind: .reference) else { return nil }
        guard case .string(let name) = value else { throw columns.raise(.rowNeedsRecord) }
        return try target(T.self, named: name, field: field)
    }

    /// The models a reference list points to, in order, as the list type asks for them.
    private func list<T: Decodable>(_ type: T.Type, _ field: String, required: Bool) throws -> T? {
        guard let value = try stored(field, kind: .referenceList) else {
            return required ? try T(from: TableRowReferencesDecoder(fields: self, field: field, names: [])) : nil
        }
        guard case .string(let list) = value, let names = TableGraphRows.names(inList: list) else {
            throw columns.raise(.rowNeedsRecord)
        }
        return try T(from: TableRowReferencesDecoder(fields: self, field: field, names: names))
    }

    /// The model of the record with a name in this row's zone, which this row references in a field.
    func target<T: Decodable>(_ type: T.Type, named name: String, field: String) throws -> T {
        guard let graph else { throw columns.raise(.needsReferencedRows) }
        return try graph.model(
            T.self, named: name, zoneKey: try columns.integer(in: row, at: columns.zoneKeyColumn),
            holder: try columns.integer(in: row, at: columns.recordRowColumn), field: field, holderColumns: columns)
    }
}

/// The fields of a row, by key.
private struct TableRowKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: TableRowFields

    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        fields.columns.fields.filter { field in
            guard let value = try? fields.columns.value(in: fields.row, at: field.column) else { return false }
            if case .null = value { return false }
            return true
        }.compactMap {
            Key(stringValue: $0.field)
        }
    }

    func contains(_ key: Key) -> Bool { fields.column(key.stringValue) != nil || key.stringValue == "id" }

    func decodeNil(forKey key: Key) throws -> Bool {
        fields.column(key.stringValue) == nil && key.stringValue != "id"
    }

    // Each without a generic helper: in this generic type, a generic function's specialization stays generic over
    // the keys, and looks up the metadata of its optionals on every call.
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        guard let value = try fields.string(key.stringValue) else { throw fields.columns.raise(.rowNeedsRecord) }
        return value
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        guard let value = try fields.bool(key.stringValue) else { throw fields.columns.raise(.rowNeedsRecord) }
        return value
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        guard let value = try fields.double(key.stringValue) else { throw fields.columns.raise(.rowNeedsRecord) }
        return value
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw fields.columns.raise(.modelNeedsRecords) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try fields.requiredInteger(key.stringValue) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try fields.requiredInteger(key.stringValue) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try fields.requiredInteger(key.stringValue) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try fields.requiredInteger(key.stringValue) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try fields.requiredInteger(key.stringValue) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try fields.requiredInteger(key.stringValue) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try fields.requiredInteger(key.stringValue) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try fields.requiredInteger(key.stringValue) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try fields.requiredInteger(key.stringValue) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try fields.requiredInteger(key.stringValue) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        // Dates and bytes first, with no optional of `T`: the types `Codable` reads through this method most.
        if T.self == Date.self { return unsafeBitCast(try fields.requiredDate(key.stringValue), to: T.self) }
        if T.self == Data.self { return unsafeBitCast(try fields.requiredData(key.stringValue), to: T.self) }
        return try fields.requiredValue(type, key.stringValue)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try fields.string(key.stringValue) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try fields.bool(key.stringValue) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try fields.double(key.stringValue) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try fields.integer(key.stringValue, as: type)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try fields.int64(key.stringValue) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try fields.value(type, key.stringValue)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw fields.columns.raise(.modelNeedsRecords)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw fields.columns.raise(.modelNeedsRecords)
    }

    func superDecoder() throws -> any Decoder { throw fields.columns.raise(.modelNeedsRecords) }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw fields.columns.raise(.modelNeedsRecords) }
}

/// A decoder of one field, for a type that decodes itself from a single value (an enumeration with raw values).
private struct TableRowValueDecoder: Decoder, SingleValueDecodingContainer {
    let fields: TableRowFields
    let field: String

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw fields.columns.raise(.modelNeedsRecords)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw fields.columns.raise(.modelNeedsRecords) }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { fields.column(field) == nil && field != "id" }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard let known = try fields.known(type, field) else { throw fields.columns.raise(.modelNeedsRecords) }
        guard let value = known else { throw fields.columns.raise(.rowNeedsRecord) }
        return value
    }
}

/// A decoder of a reference list's models, in order, for the list type to read as its elements: a model of a type
/// the row decoder reads, each from its own row.
private struct TableRowReferencesDecoder: Decoder, UnkeyedDecodingContainer {
    let fields: TableRowFields
    let field: String
    let names: [String]
    var currentIndex = 0
    /// The element type last found to be a model: checked once per list, not per element.
    private var modelType: ObjectIdentifier?

    init(fields: TableRowFields, field: String, names: [String]) {
        self.fields = fields
        self.field = field
        self.names = names
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var count: Int? { names.count }
    var isAtEnd: Bool { currentIndex >= names.count }

    func container<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw fields.columns.raise(.modelNeedsRecords)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { self }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw fields.columns.raise(.modelNeedsRecords)
    }

    mutating func decodeNil() throws -> Bool { false }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // Only models: a list of anything else is read from the record.
        if modelType != ObjectIdentifier(T.self) {
            guard T.self is any CKDecodable.Type else { throw fields.columns.raise(.modelNeedsRecords) }
            modelType = ObjectIdentifier(T.self)
        }
        guard !isAtEnd else { throw fields.columns.raise(.rowNeedsRecord) }
        let model = try fields.target(T.self, named: names[currentIndex], field: field)
        currentIndex += 1
        return model
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw fields.columns.raise(.modelNeedsRecords)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw fields.columns.raise(.modelNeedsRecords)
    }

    mutating func superDecoder() throws -> any Decoder { throw fields.columns.raise(.modelNeedsRecords) }
}
