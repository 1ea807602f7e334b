import Foundation

/// The keys a model's `init(from:)` asks its top-level container for.
final class FieldNameRecorder {
    var names: Set<String> = []
}

/// A decoder that answers every key of its top-level container with a placeholder, noting the key: what
/// ``CKRecordDecoder/fieldNames(decodedBy:)`` runs a model's initializer on.
struct FieldNameProbe: Decoder {
    let recorder: FieldNameRecorder
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(FieldNameProbeContainer<Key>(recorder: recorder))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        PlaceholderDecoder(nesting: 0).unkeyedContainer()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        PlaceholderDecoder(nesting: 0).singleValueContainer()
    }
}

private struct FieldNameProbeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let recorder: FieldNameRecorder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    private func note(_ key: Key) { recorder.names.insert(key.stringValue) }

    func contains(_ key: Key) -> Bool {
        note(key)
        return false
    }
    func decodeNil(forKey key: Key) -> Bool {
        note(key)
        return true
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        note(key)
        return try PlaceholderDecoder.value(type, nesting: 1)
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        note(key)
        return nil
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        note(key)
        return PlaceholderDecoder(nesting: 1).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        note(key)
        return PlaceholderDecoder(nesting: 1).unkeyedContainer()
    }
    func superDecoder() throws -> any Decoder { PlaceholderDecoder(nesting: 1) }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        note(key)
        return PlaceholderDecoder(nesting: 1)
    }
}
