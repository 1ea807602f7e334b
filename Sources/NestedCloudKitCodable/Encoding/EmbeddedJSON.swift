import Foundation

/// The JSON a nested value is embedded as, when it can't be a field of its own type.
///
/// It is written here rather than by `JSONEncoder`, so that the text is the same on every platform and release:
/// object keys sorted by their UTF-8 bytes, a set's elements and a dictionary's pairs sorted by their text, no
/// spaces. Dates are milliseconds since 1970 and bytes are Base64, as in CloudKit Web Services.
enum EmbeddedJSON: Decodable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([EmbeddedJSON])
    case object([String: EmbeddedJSON])

    /// The JSON text of a node.
    static func text(for node: EncodedNode, at path: CodingPath) throws -> String {
        try value(for: node, at: path).text
    }

    static func value(for node: EncodedNode, at path: CodingPath) throws -> EmbeddedJSON {
        switch node {
        case .null, .skippedNil: return .null
        case .bool(let bool): return .bool(bool)
        case .int(let int): return .int(int)
        case .double(let double): return .double(double)
        case .string(let string): return .string(string)
        case .date(let date): return .int(date.millisecondsSince1970)
        case .data(let data): return .string(data.base64EncodedString())
        case .url(let url): return .string(url.absoluteString)
        case .location(let location): return value(for: location)
        case .list(let list): return .array((list.listElements ?? []).map(value(forListElement:)))
        case .asset: throw CKCodableError.assetInEmbeddedValue(at: path)
        case .reference(_, let target):
            throw CKCodableError.referenceInEmbeddedValue(recordType: target?.identity.recordType ?? "", at: path)
        case .array(let elements, let shape):
            var values: [EmbeddedJSON] = []
            values.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                values.append(try value(for: element, at: path.appending(index: index)))
            }
            if shape.isDictionary {
                // Key, value, key, value: sort the pairs by the key's text, keeping each value with its key.
                let pairs = stride(from: 0, to: values.count - 1, by: 2).map { (values[$0], values[$0 + 1]) }
                values = pairs.sorted { $0.0.text < $1.0.text }.flatMap { [$0.0, $0.1] }
            } else if shape.isSet {
                values = values.map { ($0.text, $0) }.sorted { $0.0 < $1.0 }.map(\.1)
            }
            return .array(values)
        case .object(let entries, _):
            var object: [String: EmbeddedJSON] = [:]
            object.reserveCapacity(entries.count)
            for (key, entry) in entries {
                if case .skippedNil = entry { continue }
                object[key] = try value(for: entry, at: path.appending(NamedKey(key)))
            }
            return .object(object)
        }
    }

    /// An element of a fast-path list: only strings, integers, doubles and dates reach here.
    private static func value(forListElement element: CloudValue) -> EmbeddedJSON {
        switch element {
        case .string(let string): .string(string)
        case .int64(let int): .int(int)
        case .double(let double): .double(double)
        case .date(let date): .int(date.millisecondsSince1970)
        default: .null
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

    /// The JSON text: keys sorted by their UTF-8 bytes, numbers in their shortest exact form.
    var text: String {
        var output = ""
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let bool): output += bool ? "true" : "false"
        case .int(let int): output += String(int)
        case .double(let double):
            // Finite by construction: the encoder rejects or converts non-finite numbers before this.
            output += double.isFinite ? "\(double)" : "null"
        case .string(let string): JSONText.appendString(string, to: &output)
        case .array(let array):
            output += "["
            for (index, element) in array.enumerated() {
                if index > 0 { output += "," }
                element.write(to: &output)
            }
            output += "]"
        case .object(let object):
            output += "{"
            for (index, key) in object.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if index > 0 { output += "," }
                JSONText.appendString(key, to: &output)
                output += ":"
                object[key]?.write(to: &output)
            }
            output += "}"
        }
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
}
