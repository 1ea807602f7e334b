import Foundation

/// A JSON document, exactly as it was written.
///
/// The emulator reads requests into this rather than into the client's Codable wire types, so that the client and
/// the server are two independent readings of Apple's format and a mistake in one shows up against the other.
/// Integers stay integers (a `TIMESTAMP` in milliseconds or an `INT64` never passes through a `Double`), and
/// decimals keep the digits they were sent with, which `JSONSerialization` on Linux does not promise.
enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The member named `key` of an object; `nil` for a missing member, and for anything but an object.
    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// An integer, also from a decimal with no fraction (some clients write `5.0`).
    var int64: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value) where value.rounded() == value && abs(value) < 9.0e18: return Int64(value)
        default: return nil
        }
    }

    var int: Int? { int64.flatMap { Int(exactly: $0) } }

    var double: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    var array: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    var object: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    var isNull: Bool { self == .null }
}

extension JSONValue: Codable {
    init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? single.decode(Int64.self) {
            self = .int(int)
        } else if let double = try? single.decode(Double.self) {
            self = .double(double)
        } else if let string = try? single.decode(String.self) {
            self = .string(string)
        } else if let array = try? single.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try single.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        switch self {
        case .null: try single.encodeNil()
        case .bool(let value): try single.encode(value)
        case .int(let value): try single.encode(value)
        case .double(let value): try single.encode(value.isFinite ? value : 0)
        case .string(let value): try single.encode(value)
        case .array(let values): try single.encode(values)
        case .object(let members): try single.encode(members)
        }
    }

    /// Parses a request body; an empty body is an empty object, as CloudKit treats a GET's.
    static func parse(_ data: Data) throws -> JSONValue {
        if data.isEmpty || data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return .object([:])
        }
        return try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// The document as UTF-8 JSON, keys sorted so that answers are byte-for-byte repeatable.
    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByFloatLiteral
{
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .int(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(floatLiteral value: Double) { self = .double(value) }
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
