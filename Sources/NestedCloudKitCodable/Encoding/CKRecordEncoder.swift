import Foundation

/// Encodes a `CKEncodable` value, and every `CKEncodable` value nested in it, into linked CloudKit records.
///
/// ```swift
/// let records = try CKRecordEncoder().encode(school)
/// // [director, student 1, student 2, ..., book 1, ..., school]: each record after the records it references
/// ```
///
/// Each `CKEncodable` value becomes a record named by its ``CKRecordRepresentable/cloudKitIdentifier``, of type
/// ``CKRecordRepresentable/cloudKitRecordType``, in the encoder's ``zoneID``. Its properties become fields
/// (see the mapping table in "How Values Are Stored"); a nested `CKEncodable` property becomes a ``CloudReference`` to a record
/// of its own, an array of them a reference list. No value is dropped: what can't be mapped is an error that
/// names its coding path.
///
/// The same value always gives the same records, fields and order. A value reached twice (a shared child, a
/// diamond) gives one record; class instances that refer to each other in a cycle give records that refer to
/// each other. Two different values that claim one record ID are an error. Nested records are encoded one after
/// another, not one inside another, so a graph of any depth encodes without exhausting the stack.
public struct CKRecordEncoder: Sendable {
    /// The settings below, in one shared instance: an encode hands them to its records' writers with one retain,
    /// and setting one makes a new instance (copy on write), so copies of an encoder never see each other's changes.
    private var options: EncodingOptions

    /// The zone of every record the encoder makes, and of every reference between them.
    public var zoneID: CloudRecord.ZoneID {
        get { options.zoneID }
        set { options = options.changing { $0.zoneID = newValue } }
    }

    /// How `Data` values are stored. Defaults to ``DataEncodingStrategy/bytes``; name the fields that hold large
    /// data with ``DataEncodingStrategy/assets(forFields:)``.
    public var dataEncodingStrategy: DataEncodingStrategy {
        get { options.dataEncodingStrategy }
        set { options = options.changing { $0.dataEncodingStrategy = newValue } }
    }

    /// How nested `Codable` values that aren't records (structs, dictionaries, enums with payloads) are stored.
    /// Defaults to ``NestedValueEncodingStrategy/json``.
    public var nestedValueEncodingStrategy: NestedValueEncodingStrategy {
        get { options.nestedValueEncodingStrategy }
        set { options = options.changing { $0.nestedValueEncodingStrategy = newValue } }
    }

    /// How `Decimal` values are stored. Defaults to ``DecimalEncodingStrategy/string``, which is lossless.
    public var decimalEncodingStrategy: DecimalEncodingStrategy {
        get { options.decimalEncodingStrategy }
        set { options = options.changing { $0.decimalEncodingStrategy = newValue } }
    }

    /// What NaN and infinite `Double` and `Float` values become. Defaults to an error.
    public var nonFiniteFloatEncodingStrategy: NonFiniteFloatEncodingStrategy {
        get { options.nonFiniteFloatEncodingStrategy }
        set { options = options.changing { $0.nonFiniteFloatEncodingStrategy = newValue } }
    }

    /// Values for the `userInfo` of the `Encoder` that models' `encode(to:)` implementations see.
    public var userInfo: [CodingUserInfoKey: any Sendable] {
        get { options.userInfo }
        set { options = options.changing { $0.userInfo = newValue } }
    }

    /// Creates an encoder that makes records in the given zone.
    ///
    /// - Parameter zoneID: The zone of every record and reference; CloudKit's default zone if omitted.
    public init(zoneID: CloudRecord.ZoneID = .default) {
        options = EncodingOptions(EncodingOptions.Settings(zoneID: zoneID))
    }

    /// Encodes a value and everything nested in it into records, each after the records it references and the
    /// root's record last.
    ///
    /// Saving the records in this order, one by one or in one batch, never saves a reference before its
    /// target, so references with ``CloudReference/Action/validate`` succeed. Records that refer to each other
    /// in a cycle can't all come after each other: the reference that closes the cycle, back to a record still
    /// being encoded when it was reached, points to a record that comes later.
    ///
    /// - Parameter value: The value to encode.
    /// - Returns: The records, the root's last.
    /// - Throws: ``CKCodableError`` when a value can't be stored in CloudKit, naming its coding path, record
    ///   and field; any error the value's own `encode(to:)` throws.
    #if canImport(CloudKit)
    // On Apple platforms, `encode(_:)` gives `[CKRecord]`, as in 1.0; this form is chosen when the context asks
    // for `[CloudRecord]`.
    @_disfavoredOverload
    public func encode<Value: CKEncodable>(_ value: Value) throws -> [CloudRecord] {
        try encodeRecords(value)
    }
    #else
    public func encode<Value: CKEncodable>(_ value: Value) throws -> [CloudRecord] {
        try encodeRecords(value)
    }
    #endif

    /// Encodes a value and everything nested in it into portable records, each after the records it references
    /// and the root's record last: the same on every platform.
    ///
    /// ``encode(_:)`` gives the same records, but as `CKRecord`s on Apple platforms, as in version 1.0; use this
    /// spelling in code that runs everywhere, or that saves to any ``CloudDatabase``.
    ///
    /// ```swift
    /// let records = try CKRecordEncoder().encodeRecords(school)
    /// try await database.saveRecords(records)
    /// ```
    ///
    /// - Parameter value: The value to encode.
    /// - Returns: The records, the root's last.
    /// - Throws: ``CKCodableError`` when a value can't be stored in CloudKit, naming its coding path, record
    ///   and field; any error the value's own `encode(to:)` throws.
    public func encodeRecords<Value: CKEncodable>(_ value: Value) throws -> [CloudRecord] {
        try GraphEncoder(options: options).encodeRecords(root: value)
    }

    /// Encodes as ``encodeRecords(_:)`` does, and lists on every record, new ones too, the fields its value left out
    /// as `nil` or empty (``CloudRecord/clearedFieldNames``). A save over a stored record then clears those, and
    /// keeps any other field the stored record holds: one the model doesn't know, written by a newer version of the
    /// app.
    package func encodeRecordsListingClearedFields<Value: CKEncodable>(_ value: Value) throws -> [CloudRecord] {
        try GraphEncoder(options: options.changing { $0.listsClearedFields = true }).encodeRecords(root: value)
    }

    /// Encodes a value and everything nested in it into a ``CloudRecordGraph``: the records in the same order as
    /// ``encode(_:)`` gives them, the root, and each record by its ID.
    public func encodeGraph<Value: CKEncodable>(_ value: Value) throws -> CloudRecordGraph {
        CloudRecordGraph(dependencyOrderedRecords: try encodeRecords(value))
    }
}
