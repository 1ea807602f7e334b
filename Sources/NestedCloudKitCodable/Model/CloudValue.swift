import Foundation

/// The value of a record field: one of CloudKit's field types, or a list of one of them.
///
/// | Case | CloudKit type | Web Services type |
/// | --- | --- | --- |
/// | ``string(_:)`` | String | `STRING` |
/// | ``int64(_:)`` | Int(64) | `INT64` |
/// | ``double(_:)`` | Double | `DOUBLE` |
/// | ``date(_:)`` | Date/Time | `TIMESTAMP` |
/// | ``bytes(_:)`` | Bytes | `BYTES` |
/// | ``reference(_:)`` | Reference | `REFERENCE` |
/// | ``asset(_:)`` | Asset | `ASSETID` |
/// | ``location(_:)`` | Location | `LOCATION` |
///
/// Each has a list case (`stringList`, `int64List`, ...), CloudKit's `..._LIST` types. CloudKit has no boolean,
/// so booleans are ``int64(_:)`` values 0 and 1. Dates keep millisecond precision, as CloudKit stores them:
/// ``normalizedDate(_:)`` gives the date CloudKit gives back.
///
/// References, assets and locations are boxed (`indirect`), so that a value is a couple of words and a record's
/// fields stay compact: the common cases (strings, numbers, dates, lists) are copied and scanned much more often.
public enum CloudValue: Sendable, Hashable {
    /// A string.
    case string(String)
    /// A 64-bit signed integer.
    case int64(Int64)
    /// A double-precision floating-point number.
    case double(Double)
    /// A point in time, to the millisecond.
    case date(Date)
    /// Raw bytes, counted in the record's 1 MB.
    case bytes(Data)
    /// A link to another record.
    indirect case reference(CloudReference)
    /// A file stored beside the record, not counted in the record's 1 MB.
    indirect case asset(CloudAsset)
    /// A geographic location.
    indirect case location(CloudLocation)
    /// A list of strings.
    case stringList([String])
    /// A list of 64-bit signed integers.
    case int64List([Int64])
    /// A list of doubles.
    case doubleList([Double])
    /// A list of dates.
    case dateList([Date])
    /// A list of byte buffers.
    case bytesList([Data])
    /// A list of references.
    case referenceList([CloudReference])
    /// A list of assets.
    case assetList([CloudAsset])
    /// A list of locations.
    case locationList([CloudLocation])

    /// The value's CloudKit type.
    public var kind: Kind {
        switch self {
        case .string: .string
        case .int64: .int64
        case .double: .double
        case .date: .date
        case .bytes: .bytes
        case .reference: .reference
        case .asset: .asset
        case .location: .location
        case .stringList: .stringList
        case .int64List: .int64List
        case .doubleList: .doubleList
        case .dateList: .dateList
        case .bytesList: .bytesList
        case .referenceList: .referenceList
        case .assetList: .assetList
        case .locationList: .locationList
        }
    }

    /// The references the value holds: one for a reference, each of a reference list's, none for other values.
    public var references: [CloudReference] {
        switch self {
        case .reference(let reference): [reference]
        case .referenceList(let list): list
        default: []
        }
    }

    /// Whether this is a list with no elements: CloudKit Web Services returns any such list as `UNKNOWN_LIST`.
    public var isEmptyList: Bool { listCount == 0 }

    /// How many elements a list has; `nil` for a value that isn't a list.
    var listCount: Int? {
        switch self {
        case .stringList(let list): list.count
        case .int64List(let list): list.count
        case .doubleList(let list): list.count
        case .dateList(let list): list.count
        case .bytesList(let list): list.count
        case .referenceList(let list): list.count
        case .assetList(let list): list.count
        case .locationList(let list): list.count
        default: nil
        }
    }

    /// The date CloudKit stores for the given date: truncated to whole milliseconds since 1970.
    ///
    /// CloudKit keeps dates to the millisecond, so a date with a finer part comes back without it. The encoder
    /// stores normalized dates, so that a record holds exactly what the server will return.
    public static func normalizedDate(_ date: Date) -> Date {
        Date(millisecondsSince1970: date.millisecondsSince1970)
    }
}

extension Date {
    /// Whether CloudKit can store the date: finite, and within ±275,000 years of 1970 (JavaScript's range, which
    /// CloudKit Web Services' millisecond timestamps share).
    var isStorableInCloudKit: Bool {
        let seconds = timeIntervalSince1970
        return seconds.isFinite && abs(seconds) <= 8.64e12
    }

    /// Whole milliseconds since 1970, rounded toward the past, clamped to the range of `Int64`.
    ///
    /// `Date` counts seconds from 2001 in a `Double`, so a date made from a whole number of milliseconds since
    /// 1970 can come back a hair below it (8.99999 ms for 9 ms). A value within a microsecond of a whole
    /// millisecond is taken to be that millisecond, so that converting is stable: normalizing twice changes
    /// nothing.
    var millisecondsSince1970: Int64 {
        let milliseconds = timeIntervalSince1970 * 1000
        guard milliseconds.isFinite else { return milliseconds < 0 ? .min : .max }
        let nearest = milliseconds.rounded()
        let whole = abs(milliseconds - nearest) < 0.001 ? nearest : milliseconds.rounded(.down)
        guard whole > -9.2e18 else { return .min }
        guard whole < 9.2e18 else { return .max }
        return Int64(whole)
    }

    /// The date the given number of milliseconds after 1970.
    init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
