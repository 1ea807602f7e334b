import Foundation

/// Where a ``CloudRecordEncodable`` model writes its fields: one record, with the encoder's settings.
///
/// Each method stores a value exactly as the keyed container of a `Codable` model stores the same value under
/// the same key (see the mapping table in "How Values Are Stored"): the type's field options and the encoder's strategies
/// apply, a `nil` clears the field, a nested model becomes a reference to a record of its own (queued to be
/// encoded, deduplicated by ID, cycles closed), and an error names the coding path, record and field.
///
/// Unlike a `Codable` container, the writer writes each field into the record as it comes, with no intermediate
/// value: that is where a mapping's speed comes from. So each key is written once; writing a key again is
/// ``CKCodableError/Code/duplicateFieldName``, where a keyed container would replace the first value. For the
/// same reason, a value with several problems may report another of them first than the `Codable` path does.
///
/// The common types have methods of their own, which the compiler picks statically; anything else `Encodable`
/// goes through the generic `encode(_:forKey:)` and is stored as the `Codable` path stores it.
public struct CloudRecordWriter {
    private let graph: GraphEncoder
    private let path: CodingPath
    private let fieldOptions: RecordFieldOptions
    private let mapper: FieldMapper
    private var fields: FieldWriter
    /// The keys written, in order, to find a key written twice and to check options given by name against: kept
    /// only once the record stops following the keys the type's last record wrote (see ``noteWritten(_:)``).
    private var keysWritten: [String] = []
    /// The keys the last record of the value's type wrote, in order, none twice.
    private let knownKeys: [String]
    /// How many keys have been written while the record follows ``knownKeys``.
    private var knownKeysFollowed = 0
    private var followsKnownKeys = true
    /// The ignored keys written, kept only when options given by name must be checked against them.
    private var ignoredKeysWritten: Set<String> = []
    /// The names written so far, summarized: a name it doesn't contain is new, so nearly every field is appended
    /// without comparing its name with the others'.
    private var writtenNames = NameFilter()

    init(
        graph: GraphEncoder, recordID: CloudRecord.ID, recordType: String, path: CodingPath,
        fieldOptions: RecordFieldOptions, template: RecordTemplate = RecordTemplate()
    ) {
        self.graph = graph
        self.path = path
        self.fieldOptions = fieldOptions
        knownKeys = template.keys
        mapper = FieldMapper(options: graph.options, assetFields: fieldOptions.assetFields)
        // Room for as many fields as the type's last record had, or for most models' before one has been written:
        // growing the list from empty would copy it four times, and room for sixteen fields in every small record
        // of a graph cost a twentieth of encoding it.
        let capacity = template.fieldNames.isEmpty ? 16 : template.fieldNames.count
        fields = FieldWriter(
            recordType: recordType, id: recordID, capacity: capacity, graph: graph, knownNames: template.fieldNames)
    }

    /// The ID of the record being written.
    public var recordID: CloudRecord.ID { fields.record.id }

    /// The path from the encoded root to this record's value.
    public var codingPath: [any CodingKey] { path.keys }

    /// The encoder's ``CKRecordEncoder/userInfo``.
    public var userInfo: [CodingUserInfoKey: Any] { graph.options.encoderUserInfo }

    // MARK: Common values

    /// Stores a string.
    public mutating func encode(_ value: String, forKey key: String) throws { try set(.string(value), forKey: key) }

    /// Stores a Boolean as an Int64 field, 0 or 1.
    public mutating func encode(_ value: Bool, forKey key: String) throws {
        try set(.int64(value ? 1 : 0), forKey: key)
    }

    /// Stores an integer as an Int64 field.
    public mutating func encode(_ value: Int, forKey key: String) throws { try set(.int64(Int64(value)), forKey: key) }

    /// Stores an Int64 field.
    public mutating func encode(_ value: Int64, forKey key: String) throws { try set(.int64(value), forKey: key) }

    /// Stores a double.
    /// - Throws: ``CKCodableError/Code/nonFiniteNumber`` for NaN or infinity, unless the encoder's
    ///   ``CKRecordEncoder/nonFiniteFloatEncodingStrategy`` converts them.
    public mutating func encode(_ value: Double, forKey key: String) throws {
        if value.isFinite { return try set(.double(value), forKey: key) }
        guard !isIgnored(key) else { return }
        try write(key) { context, path in try context.node(for: value, at: path.path) }
    }

    /// Stores a date, to the millisecond as CloudKit keeps it.
    /// - Throws: ``CKCodableError/Code/dateOutOfRange`` for a date CloudKit can't store.
    public mutating func encode(_ value: Date, forKey key: String) throws {
        // A date CloudKit stores is its own field value, as the field mapper would make it; the field's coding path
        // is made only for a date to refuse.
        guard value.isStorableInCloudKit else {
            guard !isIgnored(key) else { return }
            return try write(key) { context, path in .date(try context.validated(value, at: path.path)) }
        }
        try set(.date(CloudValue.normalizedDate(value)), forKey: key)
    }

    /// Stores bytes, or an asset if the field is one of the type's asset fields or the encoder's
    /// ``CKRecordEncoder/dataEncodingStrategy`` says so.
    public mutating func encode(_ value: Data, forKey key: String) throws {
        // Bytes, unless a strategy or the type's asset fields may make it an asset: the field mapper decides that.
        if fieldOptions.assetFields.isEmpty, case .bytes = graph.options.dataEncodingStrategy {
            return try set(.bytes(value), forKey: key)
        }
        guard !isIgnored(key) else { return }
        try write(key) { _, _ in .data(value) }
    }

    /// Stores a list of strings; an empty list leaves the field out, as CloudKit can't store one.
    public mutating func encode(_ value: [String], forKey key: String) throws {
        guard value.isEmpty else { return try set(.stringList(value), forKey: key) }
        guard !isIgnored(key) else { return }
        try write(key) { _, _ in .list(.stringList(value)) }
    }

    // MARK: Optional common values

    /// Stores a string, or clears the field for `nil`.
    public mutating func encodeIfPresent(_ value: String?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    /// Stores a Boolean, or clears the field for `nil`.
    public mutating func encodeIfPresent(_ value: Bool?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    /// Stores an integer, or clears the field for `nil`.
    public mutating func encodeIfPresent(_ value: Int?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    /// Stores an Int64, or clears the field for `nil`.
    public mutating func encodeIfPresent(_ value: Int64?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    /// Stores a double, or clears the field for `nil`.
    public mutating func encodeIfPresent(_ value: Double?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    /// Stores a date, or clears the field for `nil`.
    public mutating func encodeIfPresent(_ value: Date?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    /// Stores bytes (or an asset), or clears the field for `nil`.
    public mutating func encodeIfPresent(_ value: Data?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    /// Clears the field: a record that exists on the server loses its value when saved.
    public mutating func encodeNil(forKey key: String) throws {
        guard !isIgnored(key) else { return }
        try write(key) { _, _ in .null }
    }

    // MARK: Nested models

    /// Stores a reference to a nested model's record, with the field's reference action; the model is encoded
    /// into a record of its own, which comes before this one in the encoder's output.
    /// - Throws: ``CKCodableError`` if the model's record type or name is invalid, or, later, if its record can't
    ///   be encoded.
    public mutating func encode<Model: CKEncodable>(_ value: Model, forKey key: String) throws {
        guard !isIgnored(key) else { return }
        try write(key) { context, path in try context.referenceNode(to: value, at: path.path) }
    }

    /// Stores a reference list to nested models' records, in order; an empty list leaves the field out.
    public mutating func encode<Model: CKEncodable>(_ values: [Model], forKey key: String) throws {
        guard !isIgnored(key) else { return }
        guard !values.isEmpty else { return try write(key) { _, _ in .array([], .list) } }
        // The reference list is made directly, with no node per element to map back: what mapping the nodes would
        // give, with the same checks in the same order.
        let fieldPath = FieldPath(parent: path, key: NamedKey(key))
        // The values go to the end of the graph's queue as they are named, and are counted as queued once the
        // field is written; if it isn't, they are dropped.
        let mark = graph.stagingMark
        do {
            try noteWritten(key)
            let action = fieldOptions.referenceAction(forField: key)
            let listPath = fieldPath.path
            var references: [CloudReference] = []
            references.reserveCapacity(values.count)
            graph.reserveStaging(values.count)
            let list: any NestedValueList = values
            for index in values.indices {
                let identity = try graph.identity(of: values[index], at: listPath.appending(index: index))
                references.append(CloudReference(recordID: identity.recordID, action: action))
                graph.stage(list, at: index, identity)
            }
            try fields.set(.referenceList(references), named: key, at: fieldPath)
            graph.commitStaged(from: mark)
        } catch {
            graph.discardStaged(from: mark)
            guard let error = error as? CKCodableError else { throw error }
            throw located(error, field: key)
        }
    }

    /// Stores a reference to a nested model's record, or clears the field for `nil`.
    public mutating func encodeIfPresent<Model: CKEncodable>(_ value: Model?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    // MARK: Any value

    /// Stores any other value exactly as a `Codable` model's keyed container stores it: URLs, UUIDs, decimals,
    /// locations, assets, references, other integer widths, lists, sets, and nested values that aren't models
    /// (as JSON or flattened, by the encoder's strategy). A `CloudRecord.SystemFields` value gives the record its
    /// server identity instead of a field.
    public mutating func encode<Value: Encodable>(_ value: Value, forKey key: String) throws {
        guard !isIgnored(key) else { return }
        if Value.self == CloudRecord.SystemFields.self || Value.self == CloudRecord.SystemFields?.self {
            fields.record.systemFields = value as? CloudRecord.SystemFields
            return
        }
        try write(key) { context, path in try context.slot(for: value, at: path.path).freeze() }
    }

    /// Stores any other value, or clears the field for `nil`.
    public mutating func encodeIfPresent<Value: Encodable>(_ value: Value?, forKey key: String) throws {
        if let value { try encode(value, forKey: key) } else { try encode(value, forKey: key) }
    }

    // MARK: Writing

    /// Whether the key is one of the type's ignored properties, which are left out of the record.
    private mutating func isIgnored(_ key: String) -> Bool {
        guard fieldOptions.ignores(key) else { return false }
        if !fieldOptions.namesToCheck.isEmpty { ignoredKeysWritten.insert(key) }
        return true
    }

    /// Writes a value that is its own field value (strings, integers, Booleans, finite doubles, storable dates,
    /// bytes, non-empty string lists).
    private mutating func set(_ value: CloudValue, forKey key: String) throws {
        guard !isIgnored(key) else { return }
        // No field path is made, nor captured in a closure: only an error needs it, and retaining the path and
        // the key for each field cost a fifth of writing a small record's fields.
        do {
            try noteWritten(key)
            try fields.set(value, named: key, under: path)
        } catch let error as CKCodableError {
            throw located(error, field: key)
        }
    }

    /// Writes the node `makeNode` gives, mapped onto the field as the `Codable` path maps it.
    private mutating func write(
        _ key: String, _ makeNode: (_ context: NodeContext, _ path: FieldPath) throws -> EncodedNode
    ) throws {
        let context = NodeContext(graph: graph, referenceAction: fieldOptions.referenceAction(forField: key))
        let fieldPath = FieldPath(parent: path, key: NamedKey(key))
        do {
            try noteWritten(key)
            let node = try makeNode(context, fieldPath)
            try mapper.write(node, named: key, at: fieldPath, into: &fields)
        } catch let error as CKCodableError {
            throw located(error, field: key)
        }
    }

    /// Notes a key about to be written; a key written before is an error, not a second field (or, flattened, a
    /// second set of fields). Only a name the filter may have seen is looked up.
    private mutating func noteWritten(_ key: String) throws {
        // Nearly every record of a type writes the keys its last one wrote, in the same order: while this one does,
        // each key is new, with nothing to look up or keep.
        if followsKnownKeys {
            if knownKeys.hasSameBytes(at: knownKeysFollowed, as: key) {
                knownKeysFollowed += 1
                return
            }
            followsKnownKeys = false
            keysWritten = Array(knownKeys.prefix(knownKeysFollowed))
            for written in keysWritten { writtenNames.insert(written) }
        }
        if writtenNames.mayContain(key), keysWritten.contains(where: { $0.hasSameBytes(as: key) }) {
            throw CKCodableError.keyWrittenTwice(key, recordID: recordID, at: path.appending(NamedKey(key)))
        }
        writtenNames.insert(key)
        keysWritten.append(key)
    }

    /// The error, naming this record and the field if it doesn't name a record yet.
    private func located(_ error: CKCodableError, field: String) -> CKCodableError {
        error.recordID == nil ? error.located(recordID: fields.record.id, field: error.field ?? field) : error
    }

    /// Finishes the record, where the graph keeps it: within CloudKit's size limit, its encrypted fields marked, the
    /// options given by name checked against what the value wrote.
    mutating func finish<Value: CKEncodable>(_ value: Value) throws {
        try fields.finish(at: path)
        try fieldOptions.apply(to: &fields.record, at: path)
        // The keys are only needed to check options given by name; most types have none.
        if !fieldOptions.namesToCheck.isEmpty {
            try fieldOptions.checkNames(
                encoded: writtenKeys, ignored: ignoredKeysWritten, record: fields.record, value: value, at: path)
        }
    }

    /// Whether the record wrote the template's keys and field names, or the first of them: the template needn't
    /// change.
    var followedTemplate: Bool { followsKnownKeys && fields.followedKnownNames }

    /// The keys written, in order.
    var writtenKeys: [String] {
        guard followsKnownKeys else { return keysWritten }
        return knownKeysFollowed == knownKeys.count ? knownKeys : Array(knownKeys.prefix(knownKeysFollowed))
    }
}

/// A set of names that can answer "certainly not written" in constant time: one bit per name, picked by its length
/// and first two bytes. A name whose bit is set may have been written, and is looked up.
struct NameFilter {
    private var bits: UInt64 = 0

    /// The bit of a name, from its length and first two bytes (a string's last byte costs a walk backwards).
    private static func bit(for name: String) -> UInt64 {
        let bytes = name.utf8
        var iterator = bytes.makeIterator()
        let first = Int(iterator.next() ?? 0), second = Int(iterator.next() ?? 0)
        let mix = bytes.count &* 31 &+ first &* 7 &+ second
        return 1 << UInt64(mix & 63)
    }

    func mayContain(_ name: String) -> Bool { bits & Self.bit(for: name) != 0 }

    mutating func insert(_ name: String) { bits |= Self.bit(for: name) }
}
