/// An unkeyed container inside a field's value: appends elements to an ``ArrayBuilder``.
struct NodeUnkeyedContainer: UnkeyedEncodingContainer {
    let array: ArrayBuilder
    let context: NodeContext
    let path: CodingPath

    var codingPath: [any CodingKey] { path.keys }
    var count: Int { array.elements.count }
    private var nextPath: CodingPath { path.appending(index: count) }

    private func append(_ node: EncodedNode) { array.elements.append(.node(node)) }

    mutating func encodeNil() {
        array.shape.hasOptionalElements = true
        append(.null)
    }
    mutating func encode(_ value: Bool) { append(.bool(value)) }
    mutating func encode(_ value: String) { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try context.node(for: value, at: nextPath)) }
    mutating func encode(_ value: Float) throws { append(try context.node(for: Double(value), at: nextPath)) }
    mutating func encode(_ value: Int) { append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) { append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) { append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) { append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) { append(.int(value)) }
    mutating func encode(_ value: UInt) throws { append(try context.node(for: UInt64(value), at: nextPath)) }
    mutating func encode(_ value: UInt8) { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { append(try context.node(for: value, at: nextPath)) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { append(try context.node(for: value, at: nextPath)) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { append(try context.node(for: value, at: nextPath)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        if T.self is any OptionalProtocol.Type { array.shape.hasOptionalElements = true }
        array.elements.append(try context.slot(for: value, at: nextPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let nested = ObjectBuilder()
        let nestedPath = nextPath
        array.elements.append(.object(nested))
        return KeyedEncodingContainer(NodeKeyedContainer<NestedKey>(object: nested, context: context, path: nestedPath))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayBuilder()
        let nestedPath = nextPath
        array.elements.append(.array(nested))
        return NodeUnkeyedContainer(array: nested, context: context, path: nestedPath)
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = NodeEncoder(context: context, path: nextPath)
        array.elements.append(.encoder(encoder))
        return encoder
    }
}
