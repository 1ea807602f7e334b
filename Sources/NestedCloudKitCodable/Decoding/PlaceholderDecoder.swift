import Foundation

/// Builds stand-in values of any `Decodable` type, for probing a record before the records it references are
/// fetched: zero for numbers, empty strings and collections, `nil` for optionals, the first case of a
/// `CaseIterable` enum. A type whose `init(from:)` rejects such values has no placeholder.
struct PlaceholderDecoder: Decoder {
    /// How deep placeholders may nest inside each other before giving up (a non-optional recursive class would
    /// otherwise nest forever).
    static let maximumNesting = 16

    /// Thrown when a type has no placeholder.
    struct Unavailable: Error {}

    let nesting: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    static func value<T: Decodable>(_ type: T.Type, nesting: Int) throws -> T {
        if let known = knownValue(type) as? T { return known }
        if let iterable = T.self as? any CaseIterable.Type, let first = firstCase(of: iterable) as? T { return first }
        guard nesting < maximumNesting else { throw Unavailable() }
        return try T(from: PlaceholderDecoder(nesting: nesting + 1))
    }

    private static func firstCase<C: CaseIterable>(of type: C.Type) -> C? { type.allCases.first }

    private static func knownValue<T>(_ type: T.Type) -> Any? {
        if let numeric = T.self as? any AdditiveArithmetic.Type { return numeric.zero }
        if T.self == String.self { return "" }
        if T.self == Bool.self { return false }
        if T.self == Date.self { return Date(timeIntervalSince1970: 0) }
        if T.self == Data.self { return Data() }
        if T.self == URL.self { return URL(fileURLWithPath: "/") }
        if T.self == UUID.self { return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
        if T.self == CloudLocation.self { return CloudLocation(latitude: 0, longitude: 0) }
        if T.self == CloudReference.self { return CloudReference(recordID: CloudRecord.ID(recordName: "placeholder")) }
        if T.self == CloudAsset.self { return CloudAsset(data: Data()) }
        if T.self == CloudRecord.SystemFields.self { return CloudRecord.SystemFields() }
        return nil
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(PlaceholderKeyedContainer<Key>(nesting: nesting))
    }

    func unkeyedContainer() -> any UnkeyedDecodingContainer { PlaceholderUnkeyedContainer(nesting: nesting) }

    func singleValueContainer() -> any SingleValueDecodingContainer {
        PlaceholderSingleValueContainer(nesting: nesting)
    }
}

/// A keyed container with no keys whose every value is a placeholder.
private struct PlaceholderKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let nesting: Int
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { false }
    func decodeNil(forKey key: Key) -> Bool { true }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try PlaceholderDecoder.value(type, nesting: nesting)
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { nil }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) -> KeyedDecodingContainer<
        NestedKey
    > {
        KeyedDecodingContainer(PlaceholderKeyedContainer<NestedKey>(nesting: nesting))
    }
    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedDecodingContainer {
        PlaceholderUnkeyedContainer(nesting: nesting)
    }
    func superDecoder() -> any Decoder { PlaceholderDecoder(nesting: nesting) }
    func superDecoder(forKey key: Key) -> any Decoder { PlaceholderDecoder(nesting: nesting) }
}

/// An empty list.
private struct PlaceholderUnkeyedContainer: UnkeyedDecodingContainer {
    let nesting: Int
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }

    mutating func decodeNil() -> Bool { true }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try PlaceholderDecoder.value(type, nesting: nesting)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) -> KeyedDecodingContainer<
        NestedKey
    > {
        KeyedDecodingContainer(PlaceholderKeyedContainer<NestedKey>(nesting: nesting))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedDecodingContainer {
        PlaceholderUnkeyedContainer(nesting: nesting)
    }
    mutating func superDecoder() -> any Decoder { PlaceholderDecoder(nesting: nesting) }
}

/// A single value that is `nil` when asked, or a placeholder.
private struct PlaceholderSingleValueContainer: SingleValueDecodingContainer {
    let nesting: Int
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { true }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try PlaceholderDecoder.value(type, nesting: nesting) }
}
