import Foundation

/// The JSON a nested value is embedded as, when it can't be a field of its own type.
///
/// JSON objects are written with sorted keys and sets with sorted elements, so the same value always gives the
/// same text. Dates are milliseconds since 1970 and bytes are Base64, as in CloudKit Web Services.
enum EmbeddedJSON: Codable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([EmbeddedJSON])
    case object([String: EmbeddedJSON])

    /// The JSON text of a node.
    static func text(for node: EncodedNode, at path: CodingPath) throws -> String {
        try text(of: value(for: node, at: path))
    }

    static func text(of json: EmbeddedJSON) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(json), as: UTF8.self)
    }

    static func value(for node: EncodedNode, at path: CodingPath) throws -> EmbeddedJSON {
        switch node {
        case .null: return .null
        case .bool(let bool): return .bool(bool)
        case .int(let int): return .int(int)
        case .double(let double): return .double(double)
        case .string(let string): return .string(string)
        case .date(let date): return .int(date.millisecondsSince1970)
        case .data(let data): return .string(data.base64EncodedString())
        case .url(let url): return .string(url.absoluteString)
        case .location(let location): return value(for: location)
        case .asset: throw CKCodableError.assetInEmbeddedValue(at: path)
        case .reference(_, let recordType): throw CKCodableError.referenceInEmbeddedValue(recordType: recordType, at: path)
        case .array(let elements, let unordered):
            var values: [EmbeddedJSON] = []
            values.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                values.append(try value(for: element, at: path.appending(index: index)))
            }
            if unordered {
                // A set's elements have no order of their own: sort them by their JSON text.
                values = try values.map { (text: try text(of: $0), value: $0) }.sorted { $0.text < $1.text }.map(\.value)
            }
            return .array(values)
        case .object(let entries, _):
            var object: [String: EmbeddedJSON] = [:]
            object.reserveCapacity(entries.count)
            for (key, entry) in entries { object[key] = try value(for: entry, at: path.appending(NamedKey(key))) }
            return .object(object)
        }
    }

    /// A location in the shape of `CloudLocation`'s own `Codable` form.
    private static func value(for location: CloudLocation) -> EmbeddedJSON {
        var object: [String: EmbeddedJSON] = [
            "latitude": .double(location.latitude),
            "longitude": .double(location.longitude),
            "altitude": .double(location.altitude),
            "horizontalAccuracy": .double(location.horizontalAccuracy),
            "verticalAccuracy": .double(location.verticalAccuracy),
            "course": .double(location.course),
            "speed": .double(location.speed),
        ]
        if let timestamp = location.timestamp { object["timestamp"] = .int(timestamp.millisecondsSince1970) }
        return .object(object)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? container.decode(Int64.self) {
            self = .int(int)
        } else if let double = try? container.decode(Double.self) {
            self = .double(double)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([EmbeddedJSON].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: EmbeddedJSON].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .int(let int): try container.encode(int)
        case .double(let double): try container.encode(double)
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }
}
