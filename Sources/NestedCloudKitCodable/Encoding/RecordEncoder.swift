import Foundation

/// The `Encoder` a `CKEncodable` value encodes itself into: one record.
///
/// The value's keyed container writes its properties here, one slot per field, in order; ``makeRecord()`` maps
/// the slots onto fields once the value's `encode(to:)` has returned (nested containers and super encoders can
/// be written to until then). It is also its own single-value container, so that a wrapper which encodes an
/// inner value as its single value gives that value's fields to the record.
final class RecordEncoder: Encoder, SingleValueEncodingContainer {
    let graph: GraphEncoder
    let recordID: CloudRecord.ID
    let recordType: String
    let path: CodingPath
    private let fieldOptions: RecordFieldOptions
    /// The ignored keys the value wrote, for checking the options given by name.
    private var ignoredKeysWritten: Set<String> = []
    /// The fields written so far, in order. Looked up by a linear search: records have few fields, and
    /// comparing short names is faster than hashing them. Exclusivity isn't checked at run time: only this
    /// encoder touches `slots`, one access at a time, during one synchronous `encode(to:)`.
    @exclusivity(unchecked) private var slots: [FieldSlot] = []

    /// A field written by the model: a value already mapped (for the common scalars), or a node to map.
    private struct FieldSlot {
        let name: String
        var content: Content

        enum Content {
            case value(CloudValue)
            case node(NodeSlot)
        }
    }
    private var systemFields: CloudRecord.SystemFields?
    private var isNotKeyed = false

    /// What the last record of the value's type wrote.
    private let template: RecordTemplate
    /// Whether the record's field names were the template's (set by ``makeRecord()``).
    private(set) var followedKnownNames = false

    init(
        graph: GraphEncoder, recordID: CloudRecord.ID, recordType: String, path: CodingPath,
        fieldOptions: RecordFieldOptions, template: RecordTemplate = RecordTemplate()
    ) {
        self.template = template
        self.graph = graph
        self.recordID = recordID
        self.recordType = recordType
        self.path = path
        self.fieldOptions = fieldOptions
    }

    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { graph.options.encoderUserInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RecordKeyedContainer(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        // `unkeyedContainer()` can't throw: note the error for `makeRecord()` and hand out a container whose
        // contents are discarded.
        noteNotKeyed()
        return NodeUnkeyedContainer(array: ArrayBuilder(), context: context(forField: ""), path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: Fields

    func isIgnored(_ key: some CodingKey) -> Bool {
        guard fieldOptions.ignores(key.stringValue) else { return false }
        if !fieldOptions.namesToCheck.isEmpty { ignoredKeysWritten.insert(key.stringValue) }
        return true
    }

    func context(forField name: String) -> NodeContext {
        NodeContext(graph: graph, referenceAction: fieldOptions.referenceAction(forField: name))
    }

    /// Sets the slot of a field; writing a key again replaces its value in place.
    private func set(_ content: FieldSlot.Content, forKey key: some CodingKey) {
        guard !isIgnored(key) else { return }
        let name = key.stringValue
        if let position = slots.firstIndex(where: { $0.name.hasSameBytes(as: name) }) {
            slots[position].content = content
        } else {
            slots.append(FieldSlot(name: name, content: content))
        }
    }

    func set(_ slot: NodeSlot, forKey key: some CodingKey) { set(.node(slot), forKey: key) }
    func set(_ node: EncodedNode, forKey key: some CodingKey) { set(.node(.node(node)), forKey: key) }

    /// Sets a field to a value the mapping table maps to itself (strings, integers, booleans, finite doubles).
    func set(_ value: CloudValue, forKey key: some CodingKey) { set(.value(value), forKey: key) }

    /// Encodes any value into the field of the given key.
    func encode<T: Encodable>(_ value: T, forKey key: some CodingKey) throws {
        guard !isIgnored(key) else { return }
        // A property holding the record's system fields isn't a field: it gives the record its identity on the
        // server.
        if T.self == CloudRecord.SystemFields.self || T.self == CloudRecord.SystemFields?.self {
            systemFields = value as? CloudRecord.SystemFields
            return
        }
        let name = key.stringValue
        try withLocation(field: name) {
            set(try context(forField: name).slot(for: value, at: path.appending(key)), forKey: key)
        }
    }

    func node(for value: Double, forKey key: some CodingKey) throws -> EncodedNode {
        try withLocation(field: key.stringValue) { try context(forField: "").node(for: value, at: path.appending(key)) }
    }

    func node(for value: some FixedWidthInteger, forKey key: some CodingKey) throws -> EncodedNode {
        try withLocation(field: key.stringValue) { try context(forField: "").node(for: value, at: path.appending(key)) }
    }

    /// Makes the record at the end of the graph's records: every slot mapped onto fields, validated.
    func makeRecord() throws {
        if isNotKeyed { throw CKCodableError.recordNotKeyed(recordType: recordType, recordID: recordID, at: path) }
        var writer = FieldWriter(
            recordType: recordType, id: recordID, capacity: slots.count, systemFields: systemFields, graph: graph,
            knownNames: template.fieldNames)
        let mapper = FieldMapper(options: graph.options, assetFields: fieldOptions.assetFields)
        for slot in slots {
            let name = slot.name
            try withLocation(field: name) {
                let fieldPath = FieldPath(parent: path, key: NamedKey(name))
                switch slot.content {
                case .value(let value): try writer.set(value, named: name, at: fieldPath)
                case .node(let node): try mapper.write(node.freeze(), named: name, at: fieldPath, into: &writer)
                }
            }
        }
        followedKnownNames = writer.followedKnownNames
        try writer.finish(at: path)
        try fieldOptions.apply(to: &writer.record, at: path)
    }

    /// Refuses options given by name that name nothing the value has: most likely a misspelt key.
    /// The record is the one ``makeRecord()`` made, read only when there are names to check: passing it in would
    /// copy it out of the graph's list.
    func checkFieldOptions<Value: CKEncodable>(of value: Value) throws {
        guard !fieldOptions.namesToCheck.isEmpty else { return }
        try fieldOptions.checkNames(
            encoded: slots.map(\.name), ignored: ignoredKeysWritten, record: graph.records[graph.records.count - 1],
            value: value, at: path)
    }

    /// Runs `body`, adding this record and the field to a ``CKCodableError`` that doesn't name a record yet.
    private func withLocation<Result>(field: String, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as CKCodableError where error.recordID == nil {
            throw error.located(recordID: recordID, field: error.field ?? field)
        }
    }

    private func noteNotKeyed() {
        isNotKeyed = true
    }

    // MARK: Single value

    func encodeNil() throws { noteNotKeyed() }
    func encode(_ value: Bool) throws { noteNotKeyed() }
    func encode(_ value: String) throws { noteNotKeyed() }
    func encode(_ value: Double) throws { noteNotKeyed() }
    func encode(_ value: Float) throws { noteNotKeyed() }
    func encode(_ value: Int) throws { noteNotKeyed() }
    func encode(_ value: Int8) throws { noteNotKeyed() }
    func encode(_ value: Int16) throws { noteNotKeyed() }
    func encode(_ value: Int32) throws { noteNotKeyed() }
    func encode(_ value: Int64) throws { noteNotKeyed() }
    func encode(_ value: UInt) throws { noteNotKeyed() }
    func encode(_ value: UInt8) throws { noteNotKeyed() }
    func encode(_ value: UInt16) throws { noteNotKeyed() }
    func encode(_ value: UInt32) throws { noteNotKeyed() }
    func encode(_ value: UInt64) throws { noteNotKeyed() }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func encode(_ value: Int128) throws { noteNotKeyed() }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func encode(_ value: UInt128) throws { noteNotKeyed() }

    /// A wrapper's single value: its fields become this record's.
    func encode<T: Encodable>(_ value: T) throws {
        try value.encode(to: self)
    }
}
