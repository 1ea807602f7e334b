/// The keyed container of a record: each key is a field.
///
/// `encodeIfPresent` is overridden for every type because the standard library's default skips `nil`, and a
/// `nil` must reach the record: it clears the field of a record that exists on the server.
struct RecordKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RecordEncoder

    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil(forKey key: Key) { encoder.set(EncodedNode.null, forKey: key) }
    // The common scalars map to themselves: they are stored as field values directly.
    mutating func encode(_ value: Bool, forKey key: Key) { encoder.set(CloudValue.int64(value ? 1 : 0), forKey: key) }
    mutating func encode(_ value: String, forKey key: Key) { encoder.set(CloudValue.string(value), forKey: key) }
    // Values that can be invalid are only checked when the property isn't ignored.
    mutating func encode(_ value: Double, forKey key: Key) throws {
        guard !encoder.isIgnored(key) else { return }
        encoder.set(try encoder.node(for: value, forKey: key), forKey: key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        guard !encoder.isIgnored(key) else { return }
        encoder.set(try encoder.node(for: Double(value), forKey: key), forKey: key)
    }
    mutating func encode(_ value: Int, forKey key: Key) { encoder.set(CloudValue.int64(Int64(value)), forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) { encoder.set(CloudValue.int64(Int64(value)), forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) { encoder.set(CloudValue.int64(Int64(value)), forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) { encoder.set(CloudValue.int64(Int64(value)), forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) { encoder.set(CloudValue.int64(value), forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        guard !encoder.isIgnored(key) else { return }
        encoder.set(try encoder.node(for: UInt64(value), forKey: key), forKey: key)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) { encoder.set(CloudValue.int64(Int64(value)), forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) { encoder.set(CloudValue.int64(Int64(value)), forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) { encoder.set(CloudValue.int64(Int64(value)), forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        guard !encoder.isIgnored(key) else { return }
        encoder.set(try encoder.node(for: value, forKey: key), forKey: key)
    }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws {
        guard !encoder.isIgnored(key) else { return }
        encoder.set(try encoder.node(for: value, forKey: key), forKey: key)
    }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws {
        guard !encoder.isIgnored(key) else { return }
        encoder.set(try encoder.node(for: value, forKey: key), forKey: key)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encoder.encode(value, forKey: key)
    }

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encodeIfPresent(_ value: Int128?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encodeIfPresent(_ value: UInt128?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encoder.encode(value, forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let object = ObjectBuilder()
        encoder.set(.object(object), forKey: key)
        return KeyedEncodingContainer(
            NodeKeyedContainer<NestedKey>(
                object: object, context: encoder.context(forField: key.stringValue), path: encoder.path.appending(key)
            ))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let array = ArrayBuilder()
        encoder.set(.array(array), forKey: key)
        return NodeUnkeyedContainer(
            array: array, context: encoder.context(forField: key.stringValue), path: encoder.path.appending(key)
        )
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: NamedKey.super) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key) }

    /// An encoder whose value becomes the field of the key: embedded, or flattened, like any nested value.
    private func superEncoder(named key: some CodingKey) -> any Encoder {
        let nested = NodeEncoder(context: encoder.context(forField: key.stringValue), path: encoder.path.appending(key))
        encoder.set(.encoder(nested), forKey: key)
        return nested
    }
}
