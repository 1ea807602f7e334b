import Foundation

/// `CloudValue`'s `Codable` form: `{"type": "INT64", "value": 5}`, named as CloudKit Web Services names types.
///
/// It is stable (stored records stay readable) and lossless: dates are whole milliseconds since 1970, bytes are
/// Base64, and NaN and infinities are the strings `"NaN"`, `"Infinity"` and `"-Infinity"`, which JSON can't hold
/// as numbers.
extension CloudValue: Codable {
    private enum CodingKeys: String, CodingKey {
        case type, value
    }

    /// Decodes a value from its tagged form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let typeName = try container.decode(String.self, forKey: .type)
        guard let kind = Kind(rawValue: typeName) else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "unknown type \(typeName)")
        }
        switch kind {
        case .string: self = .string(try container.decode(String.self, forKey: .value))
        case .int64: self = .int64(try container.decode(Int64.self, forKey: .value))
        case .double: self = .double(try container.decode(StoredDouble.self, forKey: .value).value)
        case .date: self = .date(Date(millisecondsSince1970: try container.decode(Int64.self, forKey: .value)))
        case .bytes: self = .bytes(try container.decode(Data.self, forKey: .value))
        case .reference: self = .reference(try container.decode(CloudReference.self, forKey: .value))
        case .asset: self = .asset(try container.decode(CloudAsset.self, forKey: .value))
        case .location: self = .location(try container.decode(CloudLocation.self, forKey: .value))
        case .stringList: self = .stringList(try container.decode([String].self, forKey: .value))
        case .int64List: self = .int64List(try container.decode([Int64].self, forKey: .value))
        case .doubleList: self = .doubleList(try container.decode([StoredDouble].self, forKey: .value).map(\.value))
        case .dateList:
            self = .dateList(try container.decode([Int64].self, forKey: .value).map(Date.init(millisecondsSince1970:)))
        case .bytesList: self = .bytesList(try container.decode([Data].self, forKey: .value))
        case .referenceList: self = .referenceList(try container.decode([CloudReference].self, forKey: .value))
        case .assetList: self = .assetList(try container.decode([CloudAsset].self, forKey: .value))
        case .locationList: self = .locationList(try container.decode([CloudLocation].self, forKey: .value))
        }
    }

    /// Encodes the value in its tagged form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind.rawValue, forKey: .type)
        switch self {
        case .string(let value): try container.encode(value, forKey: .value)
        case .int64(let value): try container.encode(value, forKey: .value)
        case .double(let value): try container.encode(StoredDouble(value), forKey: .value)
        case .date(let value): try container.encode(value.millisecondsSince1970, forKey: .value)
        case .bytes(let value): try container.encode(value, forKey: .value)
        case .reference(let value): try container.encode(value, forKey: .value)
        case .asset(let value): try container.encode(value, forKey: .value)
        case .location(let value): try container.encode(value, forKey: .value)
        case .stringList(let value): try container.encode(value, forKey: .value)
        case .int64List(let value): try container.encode(value, forKey: .value)
        case .doubleList(let value): try container.encode(value.map(StoredDouble.init), forKey: .value)
        case .dateList(let value): try container.encode(value.map(\.millisecondsSince1970), forKey: .value)
        case .bytesList(let value): try container.encode(value, forKey: .value)
        case .referenceList(let value): try container.encode(value, forKey: .value)
        case .assetList(let value): try container.encode(value, forKey: .value)
        case .locationList(let value): try container.encode(value, forKey: .value)
        }
    }
}

/// A `Double` that JSON can always hold: non-finite values as strings.
private struct StoredDouble: Codable {
    let value: Double

    init(_ value: Double) {
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) {
            value = number
            return
        }
        switch try container.decode(String.self) {
        case "NaN": value = .nan
        case "Infinity": value = .infinity
        case "-Infinity": value = -.infinity
        case let other:
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(other) isn't a number")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if value.isFinite {
            try container.encode(value)
        } else {
            try container.encode(value.isNaN ? "NaN" : value < 0 ? "-Infinity" : "Infinity")
        }
    }
}

extension CloudRecord: Codable {
    private enum CodingKeys: String, CodingKey {
        case recordType, id, fields, encryptedFieldNames, clearedFieldNames, systemFields, parentID, share
    }

    private struct Field: Codable {
        let name: String
        let value: CloudValue
    }

    /// Decodes a record from its `Codable` form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            recordType: try container.decode(String.self, forKey: .recordType),
            id: try container.decode(ID.self, forKey: .id),
            fields: Fields(try container.decode([Field].self, forKey: .fields).map { ($0.name, $0.value) }),
            systemFields: try container.decodeIfPresent(SystemFields.self, forKey: .systemFields)
        )
        clearedFieldNames = try container.decodeIfPresent([String].self, forKey: .clearedFieldNames) ?? []
        setEncrypted(
            true, fieldsNamed: try container.decodeIfPresent([String].self, forKey: .encryptedFieldNames) ?? [])
        // Absent from records stored before sharing existed, which had neither.
        parentID = try container.decodeIfPresent(ID.self, forKey: .parentID)
        shareContents = try container.decodeIfPresent(CloudShare.Contents.self, forKey: .share)
    }

    /// Encodes the record: its fields as an ordered list of names and tagged values.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(recordType, forKey: .recordType)
        try container.encode(id, forKey: .id)
        try container.encode(fields.map { Field(name: $0.name, value: $0.value) }, forKey: .fields)
        // Sorted, so that the same record always gives the same bytes.
        if !encryptedFieldNames.isEmpty {
            try container.encode(encryptedFieldNames.sorted(), forKey: .encryptedFieldNames)
        }
        if !clearedFieldNames.isEmpty { try container.encode(clearedFieldNames, forKey: .clearedFieldNames) }
        try container.encodeIfPresent(systemFields, forKey: .systemFields)
        try container.encodeIfPresent(parentID, forKey: .parentID)
        try container.encodeIfPresent(shareContents, forKey: .share)
    }
}
