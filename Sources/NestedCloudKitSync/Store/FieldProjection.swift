import Foundation
import NestedCloudKitCodable

/// Field values as SQLite sees them, in JSON: what a list's column of its record type's table holds
/// (``ColumnValue``), which `json_each` reads; and the `fields` column of `ncs_record` that the migration to the
/// third layout filled (queries read it with `json_extract` until the seventh, which empties it).
///
/// Each value is projected to what SQLite compares: a string stays a string, an integer an integer, a double a
/// real, a date its seconds since 1970, a reference its target's record name (CloudKit keeps references inside a
/// zone), a list a JSON array of those. Bytes, assets and locations can't be compared, so they are `true`: a
/// query can ask whether they are set, nothing more. A NaN or an infinity, which JSON can't hold, is `null`.
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

    /// One value as ``json(of:)-swift.type.method`` projects it: what a list's column holds.
    static func json(of value: CloudValue) -> String {
        var json = ""
        append(value, to: &json)
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

    /// A double as JSON: Swift prints the shortest text that reads back as the same double (always with a point or
    /// an exponent, so SQLite reads a real); NaN and the infinities, which JSON can't hold, are `null`.
    private static func appendDouble(_ value: Double, to json: inout String) {
        json += value.isFinite ? value.description : "null"
    }

    private static func appendString(_ value: String, to json: inout String) {
        JSONText.appendString(value, to: &json)
    }
}
