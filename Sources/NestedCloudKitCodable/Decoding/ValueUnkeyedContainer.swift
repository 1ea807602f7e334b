/// An unkeyed container over a list field's elements or a JSON array.
struct ValueUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: ValueDecoder
    let elements: [DecodingSource]
    private(set) var currentIndex = 0

    init(decoder: ValueDecoder, elements: [DecodingSource]) {
        self.decoder = decoder
        self.elements = elements
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The decoder of the current element; past the end, an error naming the index.
    private func element() throws -> ValueDecoder {
        let path = decoder.path.appending(index: currentIndex)
        guard currentIndex < elements.count else {
            throw CKCodableError.missingField(IndexKey(currentIndex).stringValue, at: DecodingLocation(path: path, recordID: decoder.record.id, field: decoder.field))
        }
        return decoder.child(elements[currentIndex], at: path, field: decoder.field)
    }

    private mutating func next<T>(_ read: (ValueDecoder) throws -> T) throws -> T {
        let value = try read(element())
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard currentIndex < elements.count, try element().decodeNil() else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next { try $0.unboxBool() } }
    mutating func decode(_ type: String.Type) throws -> String { try next { try $0.unboxString() } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next { try $0.unboxDouble() } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next { try $0.unboxFloat() } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next { try $0.unboxInteger(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next { try $0.unboxInteger(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next { try $0.unboxInteger(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next { try $0.unboxInteger(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next { try $0.unboxInteger(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next { try $0.unboxInteger(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next { try $0.unboxInteger(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next { try $0.unboxInteger(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next { try $0.unboxInteger(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next { try $0.unboxInteger(type) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next { try $0.unbox(type) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next { try $0.container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next { try $0.unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder { try next { $0 } }
}
