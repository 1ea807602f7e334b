import Foundation
import NestedCloudKitCodable

/// CloudKit Web Services' timestamps: milliseconds since 1970, for fields, locations and system fields alike.
enum WireTimestamp {
    /// The largest magnitude CloudKit stores: 275,000 years either side of 1970, JavaScript's range.
    static let limit = 8.64e15

    /// The whole milliseconds CloudKit keeps of a date.
    static func milliseconds(_ date: Date) -> Double {
        (CloudValue.normalizedDate(date).timeIntervalSince1970 * 1000).rounded()
    }

    /// The date of a timestamp, to the millisecond.
    static func date(_ milliseconds: Double) -> Date {
        CloudValue.normalizedDate(Date(timeIntervalSince1970: milliseconds / 1000))
    }
}
