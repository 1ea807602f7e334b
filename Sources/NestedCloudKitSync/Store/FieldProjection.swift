import Foundation
import NestedCloudKitCodable

/// A record's fields as SQLite sees them: the `fields` column of `ncs_record`, a JSON object that queries read
/// with `json_extract` and that declared indexes index.
///
/// Each value is projected to what SQLite compares: a string stays a string, an integer an integer, a double a
/// real, a date its seconds since 1970, a reference its target's record name (CloudKit keeps references inside a
/// zone), a list a JSON array of those. Bytes, assets and locations can't be compared, so they are `true`: a
/// query can ask whether they are set, nothing more. A NaN or an infinity, which JSON can't hold, is `null`.
///
/// The full record lives beside it in ``RecordCoding``'s form; this column only answers queries.
enum FieldProjection {
    static func json(of fields: CloudRecord.Fields) -> String {
        var json = "{"
        json.reserveCapacity(32 * fields.count + 2)
        var first = true
        for (name, value) in fields {
            if !first { json += "," }
            first = false
            appendString(name, to: &json)
            json += ":"
            append(value, to: &json)
        }
        json += "}"
        return json
    }

    private static func append(_ value: CloudValue, to json: inout String) {
        switch value {
        case .string(let value): appendString(value, to: &json)
        case .int64(let value): json += String(value)
        case .double(let value): appendDouble(value, to: &json)
        case .date(let value): appendDouble(value.timeIntervalSince1970, to: &json)
        case .reference(let value): appendString(value.recordID.recordName, to: &json)
        case .bytes, .asset, .location, .bytesList, .assetList, .locationList: json += "true"
        case .stringList(let values): appendList(values, to: &json) { appendString($0, to: &$1) }
        case .int64List(let values): appendList(values, to: &json) { $1 += String($0) }
        case .doubleList(let values): appendList(values, to: &json) { appendDouble($0, to: &$1) }
        case .dateList(let values):
            appendList(values, to: &json) { appendDouble($0.timeIntervalSince1970, to: &$1) }
        case .referenceList(let values):
            appendList(values, to: &json) { appendString($0.recordID.recordName, to: &$1) }
        }
    }

    private static func appendList<T>(_ values: [T], to json: inout String, _ element: (T, inout String) -> Void) {
        json += "["
        for (index, value) in values.enumerated() {
            if index > 0 { json += "," }
            element(value, &json)
        }
        json += "]"
    }

    static func appendDouble(_ value: Double, to json: inout String) {
        guard value.isFinite else {
            json += "null"
            return
        }
        // Swift prints the shortest text that reads back as the same double; SQLite reads it as a real.
        let text = value.description
        json += text
        if value == value.rounded(), !text.contains("e"), !text.contains(".") { json += ".0" }
    }

    static func appendString(_ value: String, to json: inout String) {
        json += "\""
        var plain = true
        for unit in value.utf8 where unit < 0x20 || unit == 0x22 || unit == 0x5C {
            plain = false
            break
        }
        if plain {
            json += value
        } else {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": json += "\\\""
                case "\\": json += "\\\\"
                case "\n": json += "\\n"
                case "\r": json += "\\r"
                case "\t": json += "\\t"
                default:
                    if scalar.value < 0x20 {
                        let hex = String(scalar.value, radix: 16)
                        json += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    } else {
                        json.unicodeScalars.append(scalar)
                    }
                }
            }
        }
        json += "\""
    }
}
