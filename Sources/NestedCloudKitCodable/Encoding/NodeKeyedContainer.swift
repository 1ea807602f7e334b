/// A keyed container inside a field's value: writes entries into an ``ObjectBuilder``.
struct NodeKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let object: ObjectBuilder
    let context: NodeContext
    let path: CodingPath

    var codingPath: [any CodingKey] { path.keys }

    private func set(_ node: EncodedNode, _ key: Key) { object.set(.node(node), forKey: key.stringValue) }

    mutating func encodeNil(forKey key: Key) { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        set(try context.node(for: value, at: path.appending(key)), key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        set(try context.node(for: Double(value), at: path.appending(key)), key)
    }
    mutating func encode(_ value: Int, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) { set(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        set(try context.node(for: UInt64(value), at: path.appending(key)), key)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        set(try context.node(for: value, at: path.appending(key)), key)
    }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws {
        set(try context.node(for: value, at: path.appending(key)), key)
    }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws {
        set(try context.node(for: value, at: path.appending(key)), key)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        object.set(try context.slot(for: value, at: path.appending(key)), forKey: key.stringValue)
    }

    // The standard library's `encodeIfPresent` writes nothing for `nil`; a flattened field must be cleared then.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) {
        if let value { encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encodeIfPresent(_ value: Int128?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encodeIfPresent(_ value: UInt128?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.skippedNil, key) }
    }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { set(.skippedNil, key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectBuilder()
        object.set(.object(nested), forKey: key.stringValue)
        return KeyedEncodingContainer(
            NodeKeyedContainer<NestedKey>(object: nested, context: context, path: path.appending(key)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayBuilder()
        object.set(.array(nested), forKey: key.stringValue)
        return NodeUnkeyedContainer(array: nested, context: context, path: path.appending(key))
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: NamedKey.super) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key) }

    private func superEncoder(named key: any CodingKey) -> any Encoder {
        let encoder = NodeEncoder(context: context, path: path.appending(key))
        object.set(.encoder(encoder), forKey: key.stringValue)
        return encoder
    }
}
