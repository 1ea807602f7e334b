import Foundation

/// Where a value being decoded comes from.
enum DecodingSource {
    /// The decoder's record's fields: the source of a `CKDecodable` value. The decoder reads the record where the
    /// session keeps it: a record has many reference-counted parts, and a copy per decoder would retain each.
    case record
    /// A field's value: a scalar, a list, or JSON text of an embedded value.
    case value(CloudValue)
    /// A value inside embedded JSON.
    case json(EmbeddedJSON)
    /// The fields of a record whose names start with the prefix: a flattened nested value.
    case flattened(CloudRecord, prefix: String)
    /// A record's name, standing in for a missing `id` field.
    case recordName(String)
    /// Nothing: a missing field. It decodes as `nil`, or as an empty list (CloudKit can't store empty lists).
    case absent

    /// What the source holds, for error messages.
    var kindDescription: String {
        switch self {
        case .record: "a record"
        case .value(let value): "a \(value.kind) field"
        case .json(let json): json.kindDescription
        case .flattened: "flattened fields"
        case .recordName: "a record name"
        case .absent: "nothing"
        }
    }
}

extension EmbeddedJSON {
    var kindDescription: String {
        switch self {
        case .null: "JSON null"
        case .bool: "a JSON boolean"
        case .int, .double: "a JSON number"
        case .string: "a JSON string"
        case .array: "a JSON array"
        case .object: "a JSON object"
        }
    }

    /// Parses the JSON text of an embedded value.
    static func parse(_ text: String) throws -> EmbeddedJSON {
        try JSONDecoder().decode(EmbeddedJSON.self, from: Data(text.utf8))
    }
}

extension CloudValue {
    /// The element of a list at a position, as a single value; `nil` past the end or for a value that isn't a list.
    func listElement(at index: Int) -> CloudValue? {
        guard index >= 0, index < listCount ?? 0 else { return nil }
        switch self {
        case .stringList(let list): return .string(list[index])
        case .int64List(let list): return .int64(list[index])
        case .doubleList(let list): return .double(list[index])
        case .dateList(let list): return .date(list[index])
        case .bytesList(let list): return .bytes(list[index])
        case .referenceList(let list): return .reference(list[index])
        case .assetList(let list): return .asset(list[index])
        case .locationList(let list): return .location(list[index])
        default: return nil
        }
    }

    /// The elements of a list, each as a single value; `nil` for a value that isn't a list.
    var listElements: [CloudValue]? {
        switch self {
        case .stringList(let list): list.map(CloudValue.string)
        case .int64List(let list): list.map(CloudValue.int64)
        case .doubleList(let list): list.map(CloudValue.double)
        case .dateList(let list): list.map(CloudValue.date)
        case .bytesList(let list): list.map(CloudValue.bytes)
        case .referenceList(let list): list.map(CloudValue.reference)
        case .assetList(let list): list.map(CloudValue.asset)
        case .locationList(let list): list.map(CloudValue.location)
        default: nil
        }
    }
}
