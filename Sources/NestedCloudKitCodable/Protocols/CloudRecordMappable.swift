import Foundation

/// A model that writes its own fields into its record, instead of going through `Encodable`.
///
/// ``CKRecordEncoder`` uses this conformance whenever a value has it (checked once per type), for the root and
/// for every value nested in a graph, and `Encodable` otherwise. The record is the same either way: the mapping
/// only removes Codable's per-field cost (container boxes, key strings, dynamic casts), about four fifths of the
/// time it takes to encode a small record. Each key is written once.
///
/// A conformance writes each stored property under its field name, in declaration order, as the synthesized
/// `encode(to:)` would:
///
/// ```swift
/// extension Note: CloudRecordEncodable {
///     func encodeFields(to record: inout CloudRecordWriter) throws {
///         try record.encode(id, forKey: "id")
///         try record.encode(title, forKey: "title")
///         try record.encodeIfPresent(dueDate, forKey: "dueDate")
///         try record.encode(folder, forKey: "folder")    // a nested model: a reference to its own record
///     }
/// }
/// ```
///
/// The model stays `Encodable`: everything else that encodes it (JSON, the store's field checks) still uses that,
/// and both must describe the same fields under the same names. The `@CloudRecord` macro (the
/// `NestedCloudKitMacros` product) writes the conformance of a struct from the same properties and `CodingKeys`
/// that Codable synthesis reads. See <doc:RecordMappings>.
///
/// A class's subclasses inherit its mapping: a subclass with fields of its own overrides `encodeFields(to:)` (and
/// calls `super`), as it would override `encode(to:)`.
public protocol CloudRecordEncodable: CKEncodable {
    /// Writes this value's fields into its record.
    ///
    /// The writer applies the type's ``CKRecordRepresentable/cloudKitFieldOptions`` (ignored fields, assets,
    /// encryption, reference actions) and the encoder's strategies exactly as for a `Codable` model.
    ///
    /// - Throws: ``CKCodableError`` when a value can't be stored in CloudKit.
    func encodeFields(to record: inout CloudRecordWriter) throws
}

/// A model that reads itself from its record, instead of going through `Decodable`.
///
/// ``CKRecordDecoder`` uses this conformance whenever a type has it (checked once per type), for the root and
/// for every record a graph references, and `Decodable` otherwise; the local store's reads use it too. The value
/// is the same either way.
///
/// ```swift
/// extension Note: CloudRecordDecodable {
///     init(fields record: CloudRecordReader) throws {
///         id = try record.decode(String.self, forKey: "id")
///         title = try record.decode(String.self, forKey: "title")
///         dueDate = try record.decodeIfPresent(Date.self, forKey: "dueDate")
///         folder = try record.decode(Folder.self, forKey: "folder")
///     }
/// }
/// ```
///
/// Like `init(from:)`, the initializer may run more than once per record (the decoder runs it on placeholder
/// values to learn which records a model references), so it should have no side effects.
public protocol CloudRecordDecodable: CKDecodable {
    /// Reads a value from its record's fields.
    ///
    /// - Throws: The reader's errors, which are `DecodingError`s inside the initializer (as a keyed container's
    ///   are, so code written for `init(from:)` handles them); the decoder reports each to its caller as the
    ///   ``CKCodableError`` it carries, naming the field and record.
    init(fields record: CloudRecordReader) throws
}

/// A model that maps itself to and from its record without Codable: see ``CloudRecordEncodable`` and
/// ``CloudRecordDecodable``.
public typealias CloudRecordMappable = CloudRecordEncodable & CloudRecordDecodable

extension CloudRecordEncodable {
    /// Encodes a value known to be of this type through its mapping: how the encoder calls the conformance it
    /// found by type, without a dynamic cast to the protocol for each value.
    /// `false`, writing nothing, if the value isn't of this type (the encoder looks the type up by the value's own
    /// type, so it always is).
    static func encodeFields<Value: CKEncodable>(of value: Value, to writer: inout CloudRecordWriter) throws -> Bool {
        // The value comes as its own type (the root as it is, a nested value opened from its box or read from its
        // list); when that is this type, as it always is, no dynamic cast (nor an optional's metadata) is needed.
        if Value.self == Self.self {
            // Read in place as the type it is: `unsafeBitCast` would copy the value, a retain and a release of each
            // of its fields, which for a flat model cost a sixth of encoding it.
            try withUnsafePointer(to: value) { pointer in
                try UnsafeRawPointer(pointer).assumingMemoryBound(to: Self.self).pointee.encodeFields(to: &writer)
            }
            return true
        }
        return try encodeFields(casting: value, to: &writer)
    }

    /// Encodes a value of another type if it is one of this type (a subclass's instance): apart, as the cast needs
    /// the metadata of an optional of the value's type, which the call above would otherwise look up every time.
    @inline(never)
    private static func encodeFields<Value: CKEncodable>(
        casting value: Value, to writer: inout CloudRecordWriter
    ) throws -> Bool {
        guard let value = value as? Self else { return false }
        try value.encodeFields(to: &writer)
        return true
    }
}
