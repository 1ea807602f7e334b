import Foundation
import NestedCloudKitCodable

/// The two fields the sync engine adds to every record it uploads, so that every device compares the same user-edit
/// times: never the server's `modificationDate`, which is the time of the upload and always favours the last
/// device to reach the server.
///
/// - `ncsEditTime` (INT64): when the user last changed any field of the record, in milliseconds since 1970.
/// - `ncsFieldEditTimes` (STRING): a JSON object from field name to the same, for field-by-field merges.
///
/// Both are stripped from records before the app sees them; in CloudKit's production schema they must exist, as
/// any field must (deploy the schema after a first sync in development).
public enum SyncMetadataFields {
    /// The field that holds the record's last user-edit time.
    public static let editTime = "ncsEditTime"
    /// The field that holds each field's last user-edit time.
    public static let fieldEditTimes = "ncsFieldEditTimes"

    /// A record without the engine's fields, and the edit times they held.
    static func split(_ record: CloudRecord) -> (record: CloudRecord, editTime: Int64?, fieldTimes: [String: Int64]) {
        var record = record
        var editTime: Int64?
        var fieldTimes: [String: Int64] = [:]
        if case .int64(let time)? = record[editTime_] { editTime = time }
        if case .string(let json)? = record[fieldEditTimes_],
            let decoded = try? JSONDecoder().decode([String: Int64].self, from: Data(json.utf8))
        {
            fieldTimes = decoded
        }
        if record[editTime_] != nil { record[editTime_] = nil }
        if record[fieldEditTimes_] != nil { record[fieldEditTimes_] = nil }
        record.clearedFieldNames.removeAll { $0 == editTime_ || $0 == fieldEditTimes_ }
        return (record, editTime, fieldTimes)
    }

    /// The record as uploaded: with the engine's fields.
    static func attach(to record: CloudRecord, editTime: Int64, fieldTimes: [String: Int64]) -> CloudRecord {
        var record = record
        record[editTime_] = .int64(editTime)
        record[fieldEditTimes_] = .string(EditTimes.json(fieldTimes))
        return record
    }

    /// Whether a field is one of the engine's.
    static func isMetadata(_ name: String) -> Bool { name == editTime_ || name == fieldEditTimes_ }

    private static let editTime_ = editTime
    private static let fieldEditTimes_ = fieldEditTimes
}

/// Edit times as stored: a JSON object with sorted keys, so the same times give the same bytes on every device.
enum EditTimes {
    static func json(_ times: [String: Int64]) -> String {
        if times.isEmpty { return "{}" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(times) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ data: Data?) -> [String: Int64] {
        guard let data, data.count > 2, let times = try? JSONDecoder().decode([String: Int64].self, from: data) else {
            return [:]
        }
        return times
    }

    static func encode(_ times: [String: Int64]) -> Data {
        Data(json(times).utf8)
    }

    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard value.isFinite else { return 0 }
        return Int64(max(-9.2e18, min(9.2e18, value)))
    }
}
