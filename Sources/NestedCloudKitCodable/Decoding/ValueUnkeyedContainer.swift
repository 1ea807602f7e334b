/// An unkeyed container over a list field's elements or a JSON array.
struct ValueUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: ValueDecoder
    let elements: Elements
    private(set) var currentIndex = 0
    /// Whether the element type last asked for is a record type, remembered because every element of a list
    /// asks for the same type and the check is a dynamic cast.
    private var recordType: (type: ObjectIdentifier, recordType: (any CKDecodable.Type)?)?

    /// The elements, read one at a time: a reference list isn't copied into boxed values up front.
    enum Elements {
        case list(CloudValue)
        case json([EmbeddedJSON])
        case none

        var count: Int {
            switch self {
            case .list(let list): list.listCount ?? 0
            case .json(let array): array.count
            case .none: 0
            }
        }

        func source(at index: Int) -> DecodingSource {
            switch self {
            case .list(let list): list.listElement(at: index).map(DecodingSource.value) ?? .absent
            case .json(let array): .json(array[index])
            case .none: .absent
            }
        }
    }

    init(decoder: ValueDecoder, elements: Elements) {
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
            throw CKCodableError.missingField(
                IndexKey(currentIndex).stringValue,
                at: DecodingLocation(path: path, recordID: decoder.record.id, field: decoder.field))
        }
        return decoder.child(elements.source(at: currentIndex), at: path, field: decoder.field)
    }

    private mutating func next<T>(_ read: (ValueDecoder) throws -> T) throws -> T {
        let value = try throwingDecodingErrors { try read(element()) }
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard currentIndex < elements.count, try throwingDecodingErrors({ try element() }).decodeNil() else {
            return false
        }
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
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try next { try $0.unboxInteger(type) } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try next { try $0.unboxInteger(type) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try throwingDecodingErrors { try decodeElement(type) }
    }

    private mutating func decodeElement<T: Decodable>(_ type: T.Type) throws -> T {
        // An element of a reference list that is a record: looked up directly, with no decoder for the element.
        if case .list(.referenceList(let references)) = elements, currentIndex < references.count,
            let recordType = recordType(of: T.self)
        {
            let path = decoder.path.appending(index: currentIndex)
            let reference = references[currentIndex]
            guard
                let value = try decoder.session.decodeReferenced(
                    recordType, reference: reference, at: path, field: decoder.field, nesting: decoder.nesting
                )
            else {
                throw CKCodableError.missingRecord(
                    reference.recordID,
                    at: DecodingLocation(path: path, recordID: decoder.record.id, field: decoder.field))
            }
            currentIndex += 1
            return try decoder.cast(value, to: T.self)
        }
        return try next { try $0.unbox(type) }
    }

    private mutating func recordType<T>(of type: T.Type) -> (any CKDecodable.Type)? {
        if let recordType, recordType.type == ObjectIdentifier(T.self) { return recordType.recordType }
        let found = T.self as? any CKDecodable.Type
        recordType = (ObjectIdentifier(T.self), found)
        return found
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<
        NestedKey
    > {
        try next { try $0.container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next { try $0.unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder { try next { $0 } }
}
