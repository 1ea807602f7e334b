import Foundation
import GRDB
import NestedCloudKitCodable

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
