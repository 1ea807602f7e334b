import Foundation
import GRDB
import NestedCloudKitCodable

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
