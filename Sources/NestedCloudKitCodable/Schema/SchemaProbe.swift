import Foundation

/// Builds an instance of a model type with a value in every field it has: each optional set, each list of one
/// element, each nested model built too, so that encoding the instance writes every field the type can write,
/// with the type the encoder gives it. What ``CloudSchema/init(models:queries:encoder:)`` reads a schema from.
///
/// A type the app gave a sample of is the sample wherever it nests. A URL that isn't declared an asset is a web
/// URL (``webURLPrefix``), which the encoder writes as a string where a file URL would be an asset: the schema
/// refuses a field that holds one (``CloudSchema/records(of:samples:encoder:)``), as its type depends on the value.
///
/// A type nested in itself (a folder's subfolders) is built twice, so that the outer one's list of the inner one
/// has an element; inside the inner one, the optionals of that type are `nil` and its lists empty. Each string, number, date and identifier is distinct, so nested records get distinct names.
final class SchemaProbe {
    /// How deep values may nest before the probe gives up: only a type that requires an instance of itself, which
    /// no finite value has, goes this deep.
    static let maximumDepth = 32

    /// Thrown when a type can't be built; the model's own errors pass through as they are.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The types being built, innermost last, each with the fields its model type declares assets.
    private var building: [(type: ObjectIdentifier, assetFields: Set<String>)] = []
    private var counter = 0
    /// The app's instances of types it can't be built, or whose fields' types depend on their values.
    private let samples: [ObjectIdentifier: any CKEncodable]

    /// How each URL the probe builds outside an asset field begins: a field whose value begins so was a URL.
    static let webURLPrefix = "https://probe.invalid/"

    init(samples: [any CKEncodable] = []) {
        var byType: [ObjectIdentifier: any CKEncodable] = [:]
        for sample in samples { byType[ObjectIdentifier(type(of: sample))] = sample }
        self.samples = byType
    }

    /// An instance of a type with every field set.
    func instance<Model: Decodable>(of type: Model.Type) throws -> Model {
        try value(type, codingPath: [], key: nil)
    }

    func value<Value: Decodable>(_ type: Value.Type, codingPath: [any CodingKey], key: String?) throws -> Value {
        counter += 1
        if let sample = samples[ObjectIdentifier(Value.self)] as? Value { return sample }
        // A list's elements are the field of the key before their indexes.
        let field = key ?? codingPath.last { !($0 is ProbeIndexKey) }?.stringValue
        if let known = knownValue(type, number: counter, isAsset: field.map(isAssetField) ?? false) as? Value {
            return known
        }
        if let wrapper = Value.self as? any SchemaProbeWrapper.Type, leavesOut(wrapper.probedElementType),
            let empty = Self.empty(of: wrapper) as? Value
        {
            return empty
        }
        if let iterable = Value.self as? any CaseIterable.Type, let first = Self.firstCase(of: iterable) as? Value {
            return first
        }
        guard building.count < Self.maximumDepth else {
            throw Failure(
                description: "\(Value.self) nests in itself without an optional or a list to end it, "
                    + "\(Self.maximumDepth) levels deep")
        }
        // A list or an optional is its field's: its elements are assets where the field is one.
        let assets =
            (Value.self as? any CKRecordRepresentable.Type)?.cloudKitFieldOptions.assetFields
            ?? (Value.self is any SchemaProbeWrapper.Type ? building.last?.assetFields ?? [] : [])
        building.append((ObjectIdentifier(Value.self), assets))
        defer { building.removeLast() }
        return try Value(from: SchemaProbeDecoder(probe: self, codingPath: codingPath))
    }

    /// Whether a value of the type is being built twice further out, so one nested in it should be left out.
    func leavesOut(_ type: Any.Type) -> Bool {
        building.count { $0.type == ObjectIdentifier(type) } >= 2
    }

    var isDeep: Bool { building.count >= Self.maximumDepth }

    private func isAssetField(_ key: String) -> Bool {
        building.last?.assetFields.contains(key) ?? false
    }

    private static func empty<Wrapper: SchemaProbeWrapper>(of type: Wrapper.Type) -> Wrapper { Wrapper.probeEmpty }

    private static func firstCase<Cases: CaseIterable>(of type: Cases.Type) -> Cases? { type.allCases.first }

    private func knownValue<Value>(_ type: Value.Type, number: Int, isAsset: Bool) -> Any? {
        if Value.self == String.self { return "probe\(number)" }
        if Value.self == Character.self { return Character("p") }
        if Value.self == Bool.self { return true }
        if let integer = Value.self as? any BinaryInteger.Type { return Self.integer(integer, number) }
        if let float = Value.self as? any BinaryFloatingPoint.Type { return Self.float(float, number) }
        if Value.self == Decimal.self { return Decimal(number) }
        if Value.self == Date.self { return Date(timeIntervalSince1970: TimeInterval(number)) }
        if Value.self == Data.self { return Data("probe\(number)".utf8) }
        if Value.self == URL.self {
            // A file URL is an asset, any other a string: an asset field gets the one it holds, any other a web URL
            // the schema recognises in the record and refuses, since a file URL there would be an asset.
            return URL(string: isAsset ? "file:///probe/\(number)" : "\(Self.webURLPrefix)\(number)")
        }
        if Value.self == UUID.self {
            var bytes = [UInt8](repeating: 0, count: 16)
            withUnsafeBytes(of: UInt64(number).bigEndian) { bytes.replaceSubrange(8..<16, with: $0) }
            return UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                    bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
        }
        if Value.self == CloudLocation.self { return CloudLocation(latitude: 1, longitude: 1) }
        if Value.self == CloudReference.self {
            return CloudReference(recordID: CloudRecord.ID(recordName: "probe\(number)"))
        }
        if Value.self == CloudAsset.self { return CloudAsset(data: Data("probe\(number)".utf8)) }
        if Value.self == CloudRecord.SystemFields.self { return CloudRecord.SystemFields() }
        return nil
    }

    private static func integer<Integer: BinaryInteger>(_ type: Integer.Type, _ number: Int) -> Integer {
        Integer(truncatingIfNeeded: number)
    }

    private static func float<Float: BinaryFloatingPoint>(_ type: Float.Type, _ number: Int) -> Float {
        Float(number)
    }
}

/// The collections and optionals the probe leaves empty when their element is a type being built, which ends a
/// type nested in itself.
protocol SchemaProbeWrapper {
    static var probedElementType: Any.Type { get }
    static var probeEmpty: Self { get }
}

extension Optional: SchemaProbeWrapper {
    static var probedElementType: Any.Type { Wrapped.self }
    static var probeEmpty: Self { nil }
}

extension Array: SchemaProbeWrapper {
    static var probedElementType: Any.Type { Element.self }
    static var probeEmpty: Self { [] }
}

extension Set: SchemaProbeWrapper {
    static var probedElementType: Any.Type { Element.self }
    static var probeEmpty: Self { [] }
}

/// The decoder of ``SchemaProbe``: every key is there, every value is the probe's, every list has one element.
struct SchemaProbeDecoder: Decoder {
    let probe: SchemaProbe
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(SchemaProbeKeyedContainer<Key>(probe: probe, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedDecodingContainer {
        SchemaProbeUnkeyedContainer(probe: probe, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueDecodingContainer {
        SchemaProbeSingleValueContainer(probe: probe, codingPath: codingPath)
    }
}

private struct SchemaProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let probe: SchemaProbe
    let codingPath: [any CodingKey]

    /// One key for a dictionary (a struct's keys are asked for by name), none once deep.
    var allKeys: [Key] { probe.isDeep ? [] : [Key(stringValue: "probe")].compactMap { $0 } }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try probe.value(type, codingPath: codingPath + [key], key: key.stringValue)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        if probe.leavesOut(type) { return nil }
        return try probe.value(type, codingPath: codingPath + [key], key: key.stringValue)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key)
        -> KeyedDecodingContainer<NestedKey>
    {
        KeyedDecodingContainer(SchemaProbeKeyedContainer<NestedKey>(probe: probe, codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedDecodingContainer {
        SchemaProbeUnkeyedContainer(probe: probe, codingPath: codingPath + [key])
    }

    func superDecoder() -> any Decoder { SchemaProbeDecoder(probe: probe, codingPath: codingPath) }

    func superDecoder(forKey key: Key) -> any Decoder {
        SchemaProbeDecoder(probe: probe, codingPath: codingPath + [key])
    }
}

private struct SchemaProbeUnkeyedContainer: UnkeyedDecodingContainer {
    let probe: SchemaProbe
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(probe: SchemaProbe, codingPath: [any CodingKey]) {
        self.probe = probe
        self.codingPath = codingPath
        count = probe.isDeep ? 0 : 1
    }

    /// One element, so a list has the type of its elements; none once deep.
    let count: Int?
    var isAtEnd: Bool { currentIndex >= (count ?? 0) }

    private var indexKey: any CodingKey { ProbeIndexKey(intValue: currentIndex) }

    mutating func decodeNil() -> Bool { false }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let value = try probe.value(type, codingPath: codingPath + [indexKey], key: nil)
        currentIndex += 1
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type)
        -> KeyedDecodingContainer<NestedKey>
    {
        defer { currentIndex += 1 }
        return KeyedDecodingContainer(
            SchemaProbeKeyedContainer<NestedKey>(probe: probe, codingPath: codingPath + [indexKey]))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedDecodingContainer {
        defer { currentIndex += 1 }
        return SchemaProbeUnkeyedContainer(probe: probe, codingPath: codingPath + [indexKey])
    }

    mutating func superDecoder() -> any Decoder {
        defer { currentIndex += 1 }
        return SchemaProbeDecoder(probe: probe, codingPath: codingPath + [indexKey])
    }
}

private struct SchemaProbeSingleValueContainer: SingleValueDecodingContainer {
    let probe: SchemaProbe
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try probe.value(type, codingPath: codingPath, key: nil)
    }
}

private struct ProbeIndexKey: CodingKey {
    var stringValue: String { "Index \(intValue ?? 0)" }
    var intValue: Int?
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
