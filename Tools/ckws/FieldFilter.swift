import ArgumentParser
import Foundation
import NestedCloudKitCodable

/// A `--filter` condition: `field=value`, or `field:TYPE=value` to give the value's CloudKit type.
///
/// A value's type must be the field's: `zip=02134` sent as INT64 would find nothing and lose the leading zero. So
/// the type is the one given, or else the one a record of the type has for the field, or else STRING; the text
/// is never guessed into a number.
struct FieldFilter: Equatable {
    /// The types a filter's value can have.
    enum ValueType: String, CaseIterable {
        case string = "STRING"
        case int64 = "INT64"
        case double = "DOUBLE"
        case timestamp = "TIMESTAMP"

        /// The type to compare a field of `kind` with, if a filter can: a list field's elements' type.
        init?(fieldKind kind: CloudValue.Kind) {
            switch kind {
            case .string, .stringList: self = .string
            case .int64, .int64List: self = .int64
            case .double, .doubleList: self = .double
            case .date, .dateList: self = .timestamp
            default: return nil
            }
        }

        static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
    }

    var field: String
    /// The type the user gave, if any.
    var type: ValueType?
    var text: String

    /// Reads `field=value` or `field:TYPE=value` (the type in any case).
    init(parsing condition: String) throws {
        guard let equals = condition.firstIndex(of: "="), equals != condition.startIndex else {
            throw ValidationError("--filter takes field=value or field:TYPE=value; \(condition) has no field.")
        }
        let left = condition[..<equals]
        text = String(condition[condition.index(after: equals)...])
        guard let colon = left.firstIndex(of: ":") else {
            field = String(left)
            return
        }
        field = String(left[..<colon])
        guard !field.isEmpty else {
            throw ValidationError("--filter takes field=value or field:TYPE=value; \(condition) has no field.")
        }
        guard let type = ValueType(rawValue: left[left.index(after: colon)...].uppercased()) else {
            throw ValidationError("--filter \(condition): the type must be one of \(ValueType.names).")
        }
        self.type = type
    }

    /// The value to compare the field with, as `type`.
    func value(as type: ValueType) throws -> CloudValue {
        switch type {
        case .string:
            return .string(text)
        case .int64:
            guard let int = Int64(text) else { throw invalid("an integer", type) }
            return .int64(int)
        case .double:
            guard let double = Double(text), double.isFinite else { throw invalid("a finite number", type) }
            return .double(double)
        case .timestamp:
            if let milliseconds = Int64(text) { return .date(Date(timeIntervalSince1970: Double(milliseconds) / 1000)) }
            let formatter = ISO8601DateFormatter()
            if let date = formatter.date(from: text) { return .date(date) }
            formatter.formatOptions = [.withFullDate]
            if let date = formatter.date(from: text) { return .date(date) }
            throw invalid("an ISO 8601 date (2024-05-01 or 2024-05-01T12:00:00Z) or milliseconds since 1970", type)
        }
    }

    private func invalid(_ expected: String, _ type: ValueType) -> ValidationError {
        ValidationError("--filter \(field)=\(text): the field is \(type.rawValue), so the value must be \(expected).")
    }
}
