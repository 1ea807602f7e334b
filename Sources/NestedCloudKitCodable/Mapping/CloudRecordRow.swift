import Foundation

/// A model that reads itself from a row of the local store's table for its record type, column by column, without
/// its record: what `@CloudRecord` writes beside ``CloudRecordDecodable/init(fields:)``, from the same properties.
///
/// The store (`NestedCloudKitSync`'s `SyncStore`) calls it when a model's row holds every value it reads exactly;
/// anything a row doesn't hold (a value of a kind a column doesn't keep exactly, a reference it can't follow) makes
/// the store read the model from its record through ``CloudRecordDecodable/init(fields:)`` instead, so both give
/// the same value. Write it by hand only as the macro would: the same reads, in the same order, with `row` in place
/// of `record`.
public protocol CloudRecordRowDecodable: CloudRecordDecodable {
    /// Reads a value from its row's columns.
    ///
    /// - Throws: Whatever the row throws: the store catches it and reads the model from its record, whose decoder
    ///   reports a real problem as a ``CKCodableError`` naming the field and record.
    init(row: CloudRecordRow) throws
}

/// The columns of one row a ``CloudRecordRowDecodable`` model reads, by field name: the same methods as
/// ``CloudRecordReader``'s with the type taken from where the value goes, which is how `@CloudRecord` calls them.
///
/// A missing field (a `NULL` column) reads as `nil` from `decodeIfPresent`; `decode` throws for it, and the store
/// reads the model from its record, which reads a missing `id` as the record's name or says which field is missing.
public struct CloudRecordRow {
    private let source: any CloudRecordRowSource

    package init(_ source: any CloudRecordRowSource) { self.source = source }

    /// Reads a string.
    public func decode(forKey key: String) throws -> String { try required(source.string(key), key) }
    /// Reads a Boolean stored as 0 or 1.
    public func decode(forKey key: String) throws -> Bool { try required(source.bool(key), key) }
    /// Reads an integer.
    public func decode(forKey key: String) throws -> Int { try required(source.integer(key), key) }
    /// Reads an Int64.
    public func decode(forKey key: String) throws -> Int64 { try required(source.int64(key), key) }
    /// Reads a double.
    public func decode(forKey key: String) throws -> Double { try required(source.double(key), key) }
    /// Reads a date.
    public func decode(forKey key: String) throws -> Date { try required(source.date(key), key) }
    /// Reads bytes.
    public func decode(forKey key: String) throws -> Data { try required(source.data(key), key) }
    /// Reads any other value: a model a reference points to, a list of them, a value that decodes from one of the
    /// above (an enumeration with raw values); anything else throws, and the store reads the record.
    public func decode<Value: Decodable>(forKey key: String) throws -> Value {
        try required(source.value(Value.self, key, required: true), key)
    }

    /// Reads a string, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> String? { try source.string(key) }
    /// Reads a Boolean, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> Bool? { try source.bool(key) }
    /// Reads an integer, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> Int? { try source.integer(key) }
    /// Reads an Int64, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> Int64? { try source.int64(key) }
    /// Reads a double, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> Double? { try source.double(key) }
    /// Reads a date, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> Date? { try source.date(key) }
    /// Reads bytes, or `nil` if the field is missing.
    public func decodeIfPresent(forKey key: String) throws -> Data? { try source.data(key) }
    /// Reads any other value, or `nil` if the field is missing.
    public func decodeIfPresent<Value: Decodable>(forKey key: String) throws -> Value? {
        try source.value(Value.self, key, required: false)
    }

    @inline(__always)
    private func required<Value>(_ value: Value?, _ key: String) throws -> Value {
        guard let value else { throw source.missing(key) }
        return value
    }
}

/// What a ``CloudRecordRow`` reads from: one row of a record type's table, given by the store's module. Each
/// method gives the field's value, `nil` for a missing one, or throws what makes the store read the record instead.
///
/// A class: a row holds it as a reference and a witness table, each call straight through, with no box to project.
package protocol CloudRecordRowSource: AnyObject {
    func string(_ field: String) throws -> String?
    func bool(_ field: String) throws -> Bool?
    func integer(_ field: String) throws -> Int?
    func int64(_ field: String) throws -> Int64?
    func double(_ field: String) throws -> Double?
    func date(_ field: String) throws -> Date?
    func data(_ field: String) throws -> Data?
    /// Any other value; when `required`, a missing list is an empty one (CloudKit stores no empty list).
    func value<Value: Decodable>(_ type: Value.Type, _ field: String, required: Bool) throws -> Value?
    /// What a required read of a missing field throws.
    func missing(_ field: String) -> any Error
}
