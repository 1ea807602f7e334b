import Foundation
import NestedCloudKitCodable

/// A field dictionary, `{"value": ..., "type": "TIMESTAMP"}`, holding a ``CloudValue`` in the documented form:
/// timestamps in milliseconds since 1970, bytes in base64, booleans as `INT64`, references, assets and locations as
/// dictionaries, lists as arrays.
///
/// Encoding always writes the type: the server takes an untyped timestamp for an `INT64` and rejects it. Decoding
/// reads the type when it is there and infers it from the JSON when it isn't; `UNKNOWN_LIST`, what the server
/// sends for an empty list, becomes an empty string list (CloudKit doesn't say which type the list had, and the
/// decoder reads an empty list of any type as an empty array).
struct WireField: Codable, Hashable, Sendable {
    /// The value, or `nil` for a field the request clears.
    var value: CloudValue?
    /// Whether the field is written as a response would carry it rather than as a request sends it: locations
    /// without the parts that read back the same when left out, so that a record read from a response is written
    /// as the server sent it.
    var exporting = false

    init(_ value: CloudValue?, exporting: Bool = false) {
        self.value = value
        self.exporting = exporting
    }

    private enum CodingKeys: String, CodingKey {
        case value, type
    }

    /// The type of an empty list in a response.
    static let unknownListType = "UNKNOWN_LIST"

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        guard let value else {
            try container.encodeNil(forKey: .value)
            return
        }
        try container.encode(value.kind.rawValue, forKey: .type)
        switch value {
        case .string(let string): try container.encode(string, forKey: .value)
        case .int64(let int): try container.encode(int, forKey: .value)
        case .double(let double): try container.encode(try Self.finite(double, container.codingPath), forKey: .value)
        case .date(let date): try container.encode(try Self.milliseconds(date, container.codingPath), forKey: .value)
        case .bytes(let data): try container.encode(data.base64EncodedString(), forKey: .value)
        case .reference(let reference): try container.encode(WireReference(reference), forKey: .value)
        case .asset(let asset): try container.encode(WireAsset(asset), forKey: .value)
        case .location(let location): try container.encode(WireLocation(location, exporting: exporting), forKey: .value)
        case .stringList(let list): try container.encode(list, forKey: .value)
        case .int64List(let list): try container.encode(list, forKey: .value)
        case .doubleList(let list):
            try container.encode(try list.map { try Self.finite($0, container.codingPath) }, forKey: .value)
        case .dateList(let list):
            try container.encode(try list.map { try Self.milliseconds($0, container.codingPath) }, forKey: .value)
        case .bytesList(let list): try container.encode(list.map { $0.base64EncodedString() }, forKey: .value)
        case .referenceList(let list): try container.encode(list.map(WireReference.init), forKey: .value)
        case .assetList(let list): try container.encode(list.map(WireAsset.init), forKey: .value)
        case .locationList(let list):
            try container.encode(list.map { WireLocation($0, exporting: exporting) }, forKey: .value)
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if try !container.contains(.value) || container.decodeNil(forKey: .value) {
            value = nil
            return
        }
        let type = try container.decodeIfPresent(String.self, forKey: .type)
        let kind: CloudValue.Kind
        if let type, type != Self.unknownListType {
            guard let known = CloudValue.Kind(rawValue: type) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .type, in: container,
                    debugDescription: "The field type \(type) is unknown to this version of NestedCloudKitCodable"
                )
            }
            kind = known
        } else {
            kind = try Self.inferredKind(of: container.superDecoder(forKey: .value))
            if type == Self.unknownListType, !kind.isList {
                throw DecodingError.dataCorruptedError(
                    forKey: .value, in: container,
                    debugDescription: "An \(Self.unknownListType) field holds a single value"
                )
            }
        }
        value = try Self.decodeValue(of: kind, from: container)
    }

    private static func decodeValue(of kind: CloudValue.Kind, from container: KeyedDecodingContainer<CodingKeys>) throws
        -> CloudValue
    {
        switch kind {
        case .string: .string(try container.decode(String.self, forKey: .value))
        case .int64: .int64(try container.decode(WireInt64.self, forKey: .value).value)
        case .double: .double(try container.decode(Double.self, forKey: .value))
        case .date: .date(try date(milliseconds: try container.decode(Double.self, forKey: .value), container))
        case .bytes: .bytes(try bytes(try container.decode(String.self, forKey: .value), container))
        case .reference: .reference(try container.decode(WireReference.self, forKey: .value).reference)
        case .asset: .asset(try container.decode(WireAsset.self, forKey: .value).asset)
        case .location: .location(try container.decode(WireLocation.self, forKey: .value).location)
        case .stringList: .stringList(try container.decode([String].self, forKey: .value))
        case .int64List: .int64List(try container.decode([WireInt64].self, forKey: .value).map(\.value))
        case .doubleList: .doubleList(try container.decode([Double].self, forKey: .value))
        case .dateList:
            .dateList(try container.decode([Double].self, forKey: .value).map { try date(milliseconds: $0, container) })
        case .bytesList:
            .bytesList(try container.decode([String].self, forKey: .value).map { try bytes($0, container) })
        case .referenceList: .referenceList(try container.decode([WireReference].self, forKey: .value).map(\.reference))
        case .assetList: .assetList(try container.decode([WireAsset].self, forKey: .value).map(\.asset))
        case .locationList: .locationList(try container.decode([WireLocation].self, forKey: .value).map(\.location))
        }
    }

    /// The type of an untyped value, from its JSON shape.
    private static func inferredKind(of decoder: any Decoder) throws -> CloudValue.Kind {
        let shape = try JSONShape(from: decoder)
        switch shape {
        case .string: return .string
        case .integer, .boolean: return .int64
        case .number: return .double
        case .dictionary(let keys): return kind(ofDictionaryWith: keys)
        case .list(let first):
            switch first {
            case .string?, nil: return .stringList
            case .integer?, .boolean?: return .int64List
            case .number?: return .doubleList
            case .dictionary(let keys)?: return kind(ofDictionaryWith: keys).listKind
            case .list?: break
            }
        }
        throw DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: decoder.codingPath, debugDescription: "A list of lists isn't a CloudKit value")
        )
    }

    private static func kind(ofDictionaryWith keys: Set<String>) -> CloudValue.Kind {
        if keys.contains("recordName") { return .reference }
        if keys.contains("latitude") { return .location }
        return .asset
    }

    private static func finite(_ double: Double, _ codingPath: [any CodingKey]) throws -> Double {
        guard double.isFinite else {
            throw EncodingError.invalidValue(
                double,
                EncodingError.Context(
                    codingPath: codingPath, debugDescription: "JSON, and so CloudKit Web Services, has no \(double)"
                ))
        }
        return double
    }

    /// Whole milliseconds since 1970, for a date CloudKit can store (within JavaScript's ±8.64e15 ms).
    private static func milliseconds(_ date: Date, _ codingPath: [any CodingKey]) throws -> Int64 {
        let milliseconds = WireTimestamp.milliseconds(date)
        guard milliseconds.isFinite, abs(milliseconds) <= WireTimestamp.limit else {
            throw EncodingError.invalidValue(
                date,
                EncodingError.Context(
                    codingPath: codingPath, debugDescription: "CloudKit stores dates within 275,000 years of 1970"
                ))
        }
        return Int64(milliseconds)
    }

    /// The date of a timestamp; one beyond what CloudKit stores is corrupt, not a date to round.
    private static func date(milliseconds: Double, _ container: KeyedDecodingContainer<CodingKeys>) throws -> Date {
        guard abs(milliseconds) <= WireTimestamp.limit else {
            throw DecodingError.dataCorruptedError(
                forKey: .value, in: container,
                debugDescription: "The timestamp \(milliseconds) is beyond CloudKit's range"
            )
        }
        return WireTimestamp.date(milliseconds)
    }

    private static func bytes(_ base64: String, _ container: KeyedDecodingContainer<CodingKeys>) throws -> Data {
        guard let data = Data(base64Encoded: base64) else {
            throw DecodingError.dataCorruptedError(
                forKey: .value, in: container, debugDescription: "BYTES must be base64")
        }
        return data
    }
}

extension CloudValue.Kind {
    /// The list type of a scalar type (a list type is its own).
    var listKind: CloudValue.Kind {
        switch self {
        case .string: .stringList
        case .int64: .int64List
        case .double: .doubleList
        case .date: .dateList
        case .bytes: .bytesList
        case .reference: .referenceList
        case .asset: .assetList
        case .location: .locationList
        default: self
        }
    }
}

/// An `INT64` value, which the server may also send as a JSON boolean (CloudKit's booleans are integers).
private struct WireInt64: Decodable {
    var value: Int64

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let bool = try? container.decode(Bool.self) {
            value = bool ? 1 : 0
        } else {
            value = try container.decode(Int64.self)
        }
    }
}

/// The shape of a JSON value, enough to infer the type of an untyped field.
private indirect enum JSONShape: Decodable {
    case string, integer, number, boolean
    case dictionary(Set<String>)
    case list(first: JSONShape?)

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
            self = .dictionary(Set(keyed.allKeys.map(\.stringValue)))
        } else if var list = try? decoder.unkeyedContainer() {
            self = .list(first: list.isAtEnd ? nil : try list.decode(JSONShape.self))
        } else {
            let single = try decoder.singleValueContainer()
            if (try? single.decode(Bool.self)) != nil {
                self = .boolean
            } else if (try? single.decode(Int64.self)) != nil {
                self = .integer
            } else if (try? single.decode(Double.self)) != nil {
                self = .number
            } else {
                _ = try single.decode(String.self)
                self = .string
            }
        }
    }
}
