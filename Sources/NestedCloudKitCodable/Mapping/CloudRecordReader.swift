import Foundation

/// Where a ``CloudRecordDecodable`` model reads its fields: one record, with the decoder's settings.
///
/// Each method reads a value exactly as the keyed container of a `Codable` model reads the same type under the
/// same key: a missing `id` field is the record's name, a missing list is empty, a nested model is the record a
/// reference points to (fetched and decoded once, however many values share it), and every failure is a
/// ``CKCodableError`` naming the coding path, record and field.
///
/// The common types have methods of their own, which the compiler picks statically; anything else `Decodable`
/// goes through the generic `decode(_:forKey:)` and is read as the `Codable` path reads it.
public struct CloudRecordReader {
    private let container: ValueKeyedContainer<NamedKey>
    /// The record's fields, held by the reader itself: read through the decoder's record (a class's property), each
    /// lookup would retain and release them around the call.
    private let fields: CloudRecord.Fields
    /// Whether a nested value may be stored flattened, as fields named after its key: then a missing field may
    /// still be a value's, and only the container can tell.
    private let mayFlatten: Bool

    init(decoder: ValueDecoder) {
        container = ValueKeyedContainer(decoder: decoder, storage: .record)
        fields = decoder.record.fields
        mayFlatten =
            if case .flattened = decoder.options.nestedValueDecodingStrategy { true } else { false }
    }

    /// The ID of the record being read.
    public var recordID: CloudRecord.ID { container.decoder.record.id }

    /// The path from the decoded root to this record's value.
    public var codingPath: [any CodingKey] { container.decoder.codingPath }

    /// The decoder's ``CKRecordDecoder/userInfo``.
    public var userInfo: [CodingUserInfoKey: Any] { container.decoder.userInfo }

    /// Whether the record has a value for the key (a field, or the record name for `id`).
    public func contains(_ key: String) -> Bool { container.contains(NamedKey(key)) }

    // MARK: Common values

    /// Reads a string; a missing `id` field reads as the record's name.
    public func decode(_ type: String.Type, forKey key: String) throws -> String {
        if case .string(let value)? = field(key) { return value }
        return try container.decode(type, forKey: NamedKey(key))
    }

    /// Reads a Boolean stored as 0 or 1.
    public func decode(_ type: Bool.Type, forKey key: String) throws -> Bool {
        if case .int64(let value)? = field(key), value == 0 || value == 1 { return value == 1 }
        return try container.decode(type, forKey: NamedKey(key))
    }

    /// Reads an integer.
    /// - Throws: ``CKCodableError/Code/valueOutOfRange`` if the stored value doesn't fit.
    public func decode(_ type: Int.Type, forKey key: String) throws -> Int {
        if case .int64(let stored)? = field(key), let value = Int(exactly: stored) { return value }
        return try container.decode(type, forKey: NamedKey(key))
    }

    /// Reads an Int64.
    public func decode(_ type: Int64.Type, forKey key: String) throws -> Int64 {
        if case .int64(let value)? = field(key) { return value }
        return try container.decode(type, forKey: NamedKey(key))
    }

    /// Reads a double (an Int64 field reads as its value; NaN and infinity as the decoder's strategy says).
    public func decode(_ type: Double.Type, forKey key: String) throws -> Double {
        if case .double(let value)? = field(key) { return value }
        return try container.decode(type, forKey: NamedKey(key))
    }

    /// Reads a date.
    public func decode(_ type: Date.Type, forKey key: String) throws -> Date {
        if case .date(let value)? = field(key), value.isStorableInCloudKit { return value }
        return try container.decode(type, forKey: NamedKey(key))
    }

    /// Reads bytes, or the contents of an asset.
    public func decode(_ type: Data.Type, forKey key: String) throws -> Data {
        if case .bytes(let value)? = field(key) { return value }
        return try container.decode(type, forKey: NamedKey(key))
    }

    /// Reads a list of strings; a missing field is an empty list.
    public func decode(_ type: [String].Type, forKey key: String) throws -> [String] {
        if case .stringList(let value)? = field(key) { return value }
        return try container.decode(type, forKey: NamedKey(key))
    }

    // MARK: Optional common values

    /// Reads a string, or `nil` if the field is missing.
    public func decodeIfPresent(_ type: String.Type, forKey key: String) throws -> String? {
        let stored = field(key)
        if case .string(let value)? = stored { return value }
        if stored == nil, readsMissingAsNil(key) { return nil }
        return try container.decodeIfPresent(type, forKey: NamedKey(key))
    }

    /// Reads a Boolean, or `nil` if the field is missing.
    public func decodeIfPresent(_ type: Bool.Type, forKey key: String) throws -> Bool? {
        let stored = field(key)
        if case .int64(let value)? = stored, value == 0 || value == 1 { return value == 1 }
        if stored == nil, readsMissingAsNil(key) { return nil }
        return try container.decodeIfPresent(type, forKey: NamedKey(key))
    }

    /// Reads an integer, or `nil` if the field is missing.
    public func decodeIfPresent(_ type: Int.Type, forKey key: String) throws -> Int? {
        let stored = field(key)
        if case .int64(let stored)? = stored, let value = Int(exactly: stored) { return value }
        if stored == nil, readsMissingAsNil(key) { return nil }
        return try container.decodeIfPresent(type, forKey: NamedKey(key))
    }

    /// Reads an Int64, or `nil` if the field is missing.
    public func decodeIfPresent(_ type: Int64.Type, forKey key: String) throws -> Int64? {
        let stored = field(key)
        if case .int64(let value)? = stored { return value }
        if stored == nil, readsMissingAsNil(key) { return nil }
        return try container.decodeIfPresent(type, forKey: NamedKey(key))
    }

    /// Reads a double, or `nil` if the field is missing.
    public func decodeIfPresent(_ type: Double.Type, forKey key: String) throws -> Double? {
        let stored = field(key)
        if case .double(let value)? = stored { return value }
        if stored == nil, readsMissingAsNil(key) { return nil }
        return try container.decodeIfPresent(type, forKey: NamedKey(key))
    }

    /// Reads a date, or `nil` if the field is missing.
    public func decodeIfPresent(_ type: Date.Type, forKey key: String) throws -> Date? {
        let stored = field(key)
        if case .date(let value)? = stored, value.isStorableInCloudKit { return value }
        if stored == nil, readsMissingAsNil(key) { return nil }
        return try container.decodeIfPresent(type, forKey: NamedKey(key))
    }

    /// Reads bytes, or `nil` if the field is missing.
    public func decodeIfPresent(_ type: Data.Type, forKey key: String) throws -> Data? {
        let stored = field(key)
        if case .bytes(let value)? = stored { return value }
        if stored == nil, readsMissingAsNil(key) { return nil }
        return try container.decodeIfPresent(type, forKey: NamedKey(key))
    }

    // MARK: Nested models

    /// Reads the model whose record a reference field points to.
    /// - Throws: ``CKCodableError/Code/missingRecord`` if that record doesn't exist.
    public func decode<Model: CKDecodable>(_ type: Model.Type, forKey key: String) throws -> Model {
        // Not optional, so the result is never nil: a missing record throws.
        guard let value = try container.decodeRecord(type, forKey: NamedKey(key), ifPresent: false) else {
            throw CKCodableError.missingField(key, at: location(ofField: key))
        }
        return value
    }

    /// Reads the model a reference field points to; `nil` if the field is missing, or if the record is and the
    /// decoder's ``CKRecordDecoder/missingReferenceStrategy`` allows it.
    public func decodeIfPresent<Model: CKDecodable>(_ type: Model.Type, forKey key: String) throws -> Model? {
        try container.decodeRecord(type, forKey: NamedKey(key), ifPresent: true)
    }

    /// Reads the models whose records a reference list points to, in order; a missing field is an empty list.
    /// - Throws: ``CKCodableError/Code/missingRecord`` if one of the records doesn't exist.
    public func decode<Model: CKDecodable>(_ type: [Model].Type, forKey key: String) throws -> [Model] {
        try container.decodeRecords(Model.self, forKey: NamedKey(key))
    }

    // MARK: Any value

    /// Reads any other value exactly as a `Codable` model's keyed container reads it: URLs, UUIDs, decimals,
    /// locations, assets, references, other integer widths, lists, sets, nested values that aren't models, and
    /// the record's `CloudRecord.SystemFields`.
    public func decode<Value: Decodable>(_ type: Value.Type, forKey key: String) throws -> Value {
        try container.decode(type, forKey: NamedKey(key))
    }

    /// Reads any other value, or `nil` if the field is missing.
    public func decodeIfPresent<Value: Decodable>(_ type: Value.Type, forKey key: String) throws -> Value? {
        try container.decodeIfPresent(type, forKey: NamedKey(key))
    }

    // MARK: Types from context

    // The same reads with the type taken from where the value goes (`title = try record.decode(forKey: "title")`):
    // what `@CloudRecord` writes, since the type a property names may not be in scope where the conformance is.

    /// Reads a string; a missing `id` field reads as the record's name.
    public func decode(forKey key: String) throws -> String { try decode(String.self, forKey: key) }
    /// Reads a Boolean stored as 0 or 1.
    public func decode(forKey key: String) throws -> Bool { try decode(Bool.self, forKey: key) }
    /// Reads an integer.
    public func decode(forKey key: String) throws -> Int { try decode(Int.self, forKey: key) }
    /// Reads an Int64.
    public func decode(forKey key: String) throws -> Int64 { try decode(Int64.self, forKey: key) }
    /// Reads a double.
    public func decode(forKey key: String) throws -> Double { try decode(Double.self, forKey: key) }
    /// Reads a date.
    public func decode(forKey key: String) throws -> Date { try decode(Date.self, forKey: key) }
    /// Reads bytes, or the contents of an asset.
    public func decode(forKey key: String) throws -> Data { try decode(Data.self, forKey: key) }
    /// Reads a list of strings; a missing field is an empty list.
    public func decode(forKey key: String) throws -> [String] { try decode([String].self, forKey: key) }
    /// Reads the model whose record a reference field points to.
    public func decode<Model: CKDecodable>(forKey key: String) throws -> Model { try decode(Model.self, forKey: key) }
    /// Reads the models whose records a reference list points to, in order.
    public func decode<Model: CKDecodable>(forKey key: String) throws -> [Model] {
        try decode([Model].self, forKey: key)
    }
    /// Reads any other value, as a `Codable` model's keyed container reads it.
    public func decode<Value: Decodable>(forKey key: String) throws -> Value { try decode(Value.self, forKey: key) }

    /// Reads a string, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> String? { try decodeIfPresent(String.self, forKey: key) }
    /// Reads a Boolean, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> Bool? { try decodeIfPresent(Bool.self, forKey: key) }
    /// Reads an integer, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> Int? { try decodeIfPresent(Int.self, forKey: key) }
    /// Reads an Int64, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> Int64? { try decodeIfPresent(Int64.self, forKey: key) }
    /// Reads a double, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> Double? { try decodeIfPresent(Double.self, forKey: key) }
    /// Reads a date, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> Date? { try decodeIfPresent(Date.self, forKey: key) }
    /// Reads bytes, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> Data? { try decodeIfPresent(Data.self, forKey: key) }
    /// Reads the model a reference field points to, or `nil` (as the form that takes the type).
    public func decodeIfPresent<Model: CKDecodable>(forKey key: String) throws -> Model? {
        try decodeIfPresent(Model.self, forKey: key)
    }
    /// Reads any other value, or `nil` if the field is missing.
    public func decodeIfPresent<Value: Decodable>(forKey key: String) throws -> Value? {
        try decodeIfPresent(Value.self, forKey: key)
    }

    /// The field's value when it is there: the common types read it straight, and anything else (a missing field,
    /// a value stored as another type, an asset, an error to report) goes through the container, which looks again.
    @inline(__always)
    private func field(_ key: String) -> CloudValue? { fields.value(named: key, hint: &container.decoder.fieldHint) }

    /// Whether a missing field reads as `nil` without asking the container, which would look for it again: any
    /// key but `id` (which reads as the record's name), unless nested values may be flattened.
    @inline(__always)
    private func readsMissingAsNil(_ key: String) -> Bool { !mayFlatten && key != "id" }

    private func location(ofField key: String) -> DecodingLocation {
        DecodingLocation(path: container.decoder.path.appending(NamedKey(key)), recordID: recordID, field: key)
    }
}
