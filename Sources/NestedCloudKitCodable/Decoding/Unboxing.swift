import Foundation

/// Reading the common types from a source without a decoder: `nil` when the source doesn't hold the type
/// exactly, in which case the caller makes a decoder, which reads the rest or says what went wrong.
enum Unboxing {
    static func string(_ source: DecodingSource) -> String? {
        if case .value(.string(let string)) = source { return string }
        return nil
    }

    static func bool(_ source: DecodingSource) -> Bool? {
        if case .value(.int64(let int)) = source, int == 0 || int == 1 { return int == 1 }
        return nil
    }

    static func integer<T: FixedWidthInteger>(_ source: DecodingSource) -> T? {
        if case .value(.int64(let int)) = source { return T(exactly: int) }
        return nil
    }

    static func double(_ source: DecodingSource) -> Double? {
        if case .value(.double(let double)) = source { return double }
        return nil
    }

    /// A value of a type read directly from a field (strings, numbers, dates, bytes, lists of strings), or `nil`.
    static func known<T>(_ source: DecodingSource) -> T? {
        guard case .value(let value) = source else { return nil }
        switch value {
        case .string(let string) where T.self == String.self: return string as? T
        case .int64(let int) where T.self == Int.self: return Int(exactly: int) as? T
        case .double(let double) where T.self == Double.self: return double as? T
        case .date(let date) where T.self == Date.self && date.isStorableInCloudKit: return date as? T
        case .bytes(let data) where T.self == Data.self: return data as? T
        case .stringList(let strings) where T.self == [String].self: return strings as? T
        default: return nil
        }
    }
}
