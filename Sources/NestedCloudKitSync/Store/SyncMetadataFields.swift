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
        if case .string(let json)? = record[fieldEditTimes_] { fieldTimes = EditTimes.decode(Data(json.utf8)) }
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
///
/// Written and read by hand for the names CloudKit accepts (ASCII letters, digits, underscores and dots, which JSON
/// doesn't escape), in the bytes `JSONEncoder` writes with `.sortedKeys` (names in the order of their bytes): every
/// save and fetch reads and writes them, and Foundation's coders were a third of a local save. Anything else goes
/// through Foundation's coders.
enum EditTimes {
    static func json(_ times: [String: Int64]) -> String {
        if times.isEmpty { return "{}" }
        guard times.keys.allSatisfy(isPlainName) else { return foundationJSON(times) }
        var json = "{"
        for (index, name) in times.keys.sorted().enumerated() {
            if index > 0 { json += "," }
            json += "\"" + name + "\":" + String(times[name] ?? 0)
        }
        return json + "}"
    }

    private static func foundationJSON(_ times: [String: Int64]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(times) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Whether JSON writes a name as its bytes: ASCII letters, digits, underscores and dots.
    private static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x5F || byte == 0x2E
            }
    }

    static func decode(_ data: Data?) -> [String: Int64] {
        guard let data, data.count > 2 else { return [:] }
        if let times = plainObject(data) { return times }
        return (try? JSONDecoder().decode([String: Int64].self, from: data)) ?? [:]
    }

    /// A JSON object of plain names and integers, as ``json(_:)`` writes it (spaces allowed); `nil` for anything
    /// else, which Foundation's decoder reads or refuses.
    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func plainObject(_ data: Data) -> [String: Int64]? {
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> [String: Int64]? in
            var position = 0
            func skipSpaces() {
                while position < bytes.count, isSpace(bytes[position]) { position += 1 }
            }
            func take(_ byte: UInt8) -> Bool {
                skipSpaces()
                guard position < bytes.count, bytes[position] == byte else { return false }
                position += 1
                return true
            }
            guard take(0x7B) else { return nil }
            var times: [String: Int64] = [:]
            if take(0x7D) { return position == bytes.count ? times : nil }
            while true {
                guard take(0x22) else { return nil }
                let start = position
                while position < bytes.count, bytes[position] != 0x22 {
                    // An escape: Foundation's decoder reads it.
                    if bytes[position] == 0x5C { return nil }
                    position += 1
                }
                guard position < bytes.count else { return nil }
                let name = String(decoding: bytes[start..<position], as: UTF8.self)
                position += 1
                guard take(0x3A) else { return nil }
                skipSpaces()
                let negative = position < bytes.count && bytes[position] == 0x2D
                if negative { position += 1 }
                var value: Int64 = 0
                let digits = position
                while position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39 {
                    let digit = Int64(bytes[position] - 0x30)
                    let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
                    let (next, overflow2) =
                        negative
                        ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
                    guard !overflow, !overflow2 else { return nil }
                    value = next
                    position += 1
                }
                guard position > digits else { return nil }
                times[name] = value
                if take(0x2C) { continue }
                guard take(0x7D) else { return nil }
                skipSpaces()
                return position == bytes.count ? times : nil
            }
        }
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
