import Foundation
import GRDB
import NestedCloudKitCodable

/// Why a model isn't read from its table's row, and is read from its record instead.
enum RowDecodingFallback: Error {
    /// The model's type reads what a row never holds exactly (a nested value, a model it references, a list, an
    /// asset, its system fields): its reads take records from then on (``TableRowReading``).
    case modelNeedsRecords
    /// The row doesn't hold what the model reads (a field it has no value for, a row marked `_inexact`): this read
    /// takes records, whose decoder reads the value or says exactly what is wrong.
    case rowNeedsRecord
}

/// The columns of a statement over a record type's table, as ``TableRowDecoder`` reads them: each field's column
/// and kind, and the order the model asked for its fields in the row before, so that the next row finds each
/// column by comparing a name instead of hashing it.
///
/// One per read, used on the read's thread only.
final class TableRowColumns {
    /// The statement's column of each field.
    private let columns: [String: Int]
    /// The kind of each of the statement's columns (`nil` for a system column, or a field no record had).
    let kinds: [CloudValue.Kind?]
    let nameColumn: Int
    /// The fields asked for in the last row, in order, with their columns (`nil`: the table has none).
    private var order: [(field: String, column: Int?)] = []
    private var next = 0

    init(statementColumns names: [String], table: RecordTypeTable) {
        var columns: [String: Int] = [:]
        var kinds: [CloudValue.Kind?] = []
        var nameColumn = 0
        for (index, name) in names.enumerated() {
            if name == "_record_name" { nameColumn = index }
            if let position = table.positions[name] {
                columns[name] = index
                kinds.append(table.columns[position].kind)
            } else {
                kinds.append(nil)
            }
        }
        self.columns = columns
        self.kinds = kinds
        self.nameColumn = nameColumn
    }

    /// Starts a row: its fields are looked up in the order of the row before.
    func beginRow() { next = 0 }

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
}

/// A `Decoder` over one row of a record type's table: what the store's decoder would read from the row's record,
/// read from its columns, for the values the columns hold exactly (``ColumnValue/isReadable(_:)``): strings,
/// integers and Booleans, doubles, dates and bytes, optional or not, and values that decode from one of them (an
/// enumeration with raw values). A missing `id` field is the record's name, as for a record.
///
/// Anything else throws a ``RowDecodingFallback``, and the model is read from its record: the row decoder never
/// decides what a value means differently from the record's decoder, it only reads the common ones faster.
struct TableRowDecoder: Decoder {
    let row: Row
    let columns: TableRowColumns

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(TableRowKeyedContainer<Key>(row: row, columns: columns))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw RowDecodingFallback.modelNeedsRecords }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw RowDecodingFallback.modelNeedsRecords
    }
}

/// The values of one row, by field: what the keyed container reads, outside of any generic context. The container
/// is generic over the model's keys, which the store's module can't specialize; code in it looks its own type's
/// metadata up at run time on every call.
private struct TableRowFields {
    let row: Row
    let columns: TableRowColumns

    /// The column of a field if the row has a value for it, else `nil`.
    func column(_ field: String) -> Int? {
        guard let column = columns.column(of: field), !row.hasNull(atIndex: column) else { return nil }
        return column
    }

    /// The column of a field, which must hold a value of the kind.
    private func column(_ field: String, kind: CloudValue.Kind) throws -> Int? {
        guard let column = column(field) else { return nil }
        // Another kind is read as the record's decoder reads it (a double from an integer, say), or refused.
        guard columns.kinds[column] == kind else { throw RowDecodingFallback.modelNeedsRecords }
        return column
    }

    func string(_ field: String) throws -> String? {
        if let column = try column(field, kind: .string) { return try row.decode(String.self, atIndex: column) }
        return field == "id" ? try row.decode(String.self, atIndex: columns.nameColumn) : nil
    }

    func int64(_ field: String) throws -> Int64? {
        guard let column = try column(field, kind: .int64) else { return nil }
        return try row.decode(Int64.self, atIndex: column)
    }

    /// An integer the row must have.
    func requiredInteger<T: FixedWidthInteger>(_ field: String) throws -> T {
        guard let value = try integer(field, as: T.self) else { throw RowDecodingFallback.rowNeedsRecord }
        return value
    }

    func integer<T: FixedWidthInteger>(_ field: String, as type: T.Type) throws -> T? {
        guard let value = try int64(field) else { return nil }
        guard let integer = T(exactly: value) else { throw RowDecodingFallback.rowNeedsRecord }
        return integer
    }

    func bool(_ field: String) throws -> Bool? {
        guard let value = try int64(field) else { return nil }
        guard value == 0 || value == 1 else { throw RowDecodingFallback.rowNeedsRecord }
        return value == 1
    }

    func double(_ field: String) throws -> Double? {
        guard let column = try column(field, kind: .double) else { return nil }
        return try row.decode(Double.self, atIndex: column)
    }

    func date(_ field: String) throws -> Date? {
        guard let column = try column(field, kind: .date) else { return nil }
        let seconds = try row.decode(Double.self, atIndex: column)
        // The dates CloudKit can store (JavaScript's range), as the record's decoder checks.
        guard seconds.isFinite, abs(seconds) <= 8.64e12 else { throw RowDecodingFallback.rowNeedsRecord }
        return Date(timeIntervalSince1970: seconds)
    }

    /// A date the row must have.
    func requiredDate(_ field: String) throws -> Date {
        guard let date = try date(field) else { throw RowDecodingFallback.rowNeedsRecord }
        return date
    }

    /// Bytes the row must have.
    func requiredData(_ field: String) throws -> Data {
        guard let data = try data(field) else { throw RowDecodingFallback.rowNeedsRecord }
        return data
    }

    func data(_ field: String) throws -> Data? {
        guard let column = try column(field, kind: .bytes) else { return nil }
        return try row.decode(Data.self, atIndex: column)
    }

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
}

/// The fields of a row, by key.
private struct TableRowKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: TableRowFields

    init(row: Row, columns: TableRowColumns) {
        fields = TableRowFields(row: row, columns: columns)
    }

    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        fields.columns.fields.filter { !fields.row.hasNull(atIndex: $0.column) }.compactMap {
            Key(stringValue: $0.field)
        }
    }

    func contains(_ key: Key) -> Bool { fields.column(key.stringValue) != nil || key.stringValue == "id" }

    func decodeNil(forKey key: Key) throws -> Bool {
        fields.column(key.stringValue) == nil && key.stringValue != "id"
    }

    /// Whether the record's decoder reads a type in a way of its own (a model it references, a file, a location,
    /// a number kept as text), which a row doesn't hold.
    private func isReadFromRecords<T>(_ type: T.Type) -> Bool {
        T.self is any CKDecodable.Type || T.self == URL.self || T.self == UUID.self || T.self == Decimal.self
            || T.self == Float.self || T.self == CloudLocation.self || T.self == CloudReference.self
            || T.self == CloudAsset.self || T.self == CloudRecord.SystemFields.self
            || T.self == CloudRecord.SystemFields?.self || T.self is any Collection.Type
    }

    // Each without a generic helper: in this generic type, a generic function's specialization stays generic over
    // the keys, and looks up the metadata of its optionals on every call.
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        guard let value = try fields.string(key.stringValue) else { throw RowDecodingFallback.rowNeedsRecord }
        return value
    }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        guard let value = try fields.bool(key.stringValue) else { throw RowDecodingFallback.rowNeedsRecord }
        return value
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        guard let value = try fields.double(key.stringValue) else { throw RowDecodingFallback.rowNeedsRecord }
        return value
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw RowDecodingFallback.modelNeedsRecords }
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
        if let known = try fields.known(type, key.stringValue) {
            guard let value = known else { throw RowDecodingFallback.rowNeedsRecord }
            return value
        }
        guard !isReadFromRecords(type) else { throw RowDecodingFallback.modelNeedsRecords }
        return try T(from: TableRowValueDecoder(container: self, key: key))
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try fields.string(key.stringValue) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try fields.bool(key.stringValue) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try fields.double(key.stringValue) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try fields.integer(key.stringValue, as: type)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try fields.int64(key.stringValue) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        if let known = try fields.known(type, key.stringValue) { return known }
        guard !isReadFromRecords(type) else { throw RowDecodingFallback.modelNeedsRecords }
        guard fields.column(key.stringValue) != nil else {
            // A missing `id` of another type than a string is read from the record name by the record's decoder.
            if key.stringValue == "id" { throw RowDecodingFallback.rowNeedsRecord }
            return nil
        }
        return try T(from: TableRowValueDecoder(container: self, key: key))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw RowDecodingFallback.modelNeedsRecords
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw RowDecodingFallback.modelNeedsRecords
    }

    func superDecoder() throws -> any Decoder { throw RowDecodingFallback.modelNeedsRecords }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw RowDecodingFallback.modelNeedsRecords }

    // MARK: One field's value, for a type that decodes from a single value

    /// A decoder of one field, for a type that decodes itself from a single value (an enumeration with raw values).
    private struct TableRowValueDecoder: Decoder, SingleValueDecodingContainer {
        let container: TableRowKeyedContainer<Key>
        let key: Key

        var codingPath: [any CodingKey] { [key] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            throw RowDecodingFallback.modelNeedsRecords
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw RowDecodingFallback.modelNeedsRecords
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

        func decodeNil() -> Bool { (try? container.decodeNil(forKey: key)) ?? false }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            guard let known = try container.fields.known(type, key.stringValue) else {
                throw RowDecodingFallback.modelNeedsRecords
            }
            guard let value = known else { throw RowDecodingFallback.rowNeedsRecord }
            return value
        }
    }
}
