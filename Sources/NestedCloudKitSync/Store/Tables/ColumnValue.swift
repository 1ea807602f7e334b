import Foundation
import GRDB
import NestedCloudKitCodable

/// A field's value as a column of its record type's table holds it (``RecordTypeTable``): what SQLite compares,
/// and, for the values a model reads from a row, exactly the value.
///
/// | Field | Column | Exact |
/// | --- | --- | --- |
/// | string | TEXT | yes, but a string holding a NUL character |
/// | int64 (and booleans) | INTEGER | yes |
/// | double | REAL | yes, but a NaN (which SQLite keeps as NULL) and -0 (which it keeps as 0) |
/// | date | REAL, seconds since 1970 | when those seconds give the same `Date` back |
/// | bytes | BLOB | yes |
/// | reference | TEXT, the target's record name | no (CloudKit keeps references inside a zone) |
/// | asset, location | INTEGER 1: set | no: a query can ask whether they are set |
/// | list | TEXT, a JSON array of the elements' columns (bytes, assets and locations as `true`) | no |
///
/// A model reads the exact kinds (``isReadable(_:)``) from a row; a field of another kind is read from the record.
/// A row with a value of an exact kind that its column doesn't hold exactly (a NaN, a date whose seconds don't give
/// it back, a field whose kind isn't its column's) is marked (`_inexact`), and its models are read from the record.
enum ColumnValue {
    /// The column type a field of a kind is declared with: its affinity, what SQLite compares and sorts by.
    static func declaredType(of kind: CloudValue.Kind) -> String {
        switch kind {
        case .string, .reference: "TEXT"
        case .int64, .asset, .location: "INTEGER"
        case .double, .date: "REAL"
        case .bytes: "BLOB"
        case .stringList, .int64List, .doubleList, .dateList, .bytesList, .referenceList, .assetList, .locationList:
            "TEXT"
        }
    }

    /// The column's value of a field, and whether a model reads the field's value back from it exactly.
    static func column(of value: CloudValue) -> (value: DatabaseValue, exact: Bool) {
        switch value {
        // GRDB reads text up to its first NUL: a string holding one is read from the record.
        case .string(let value): return (value.databaseValue, !value.utf8.contains(0))
        case .int64(let value): return (value.databaseValue, true)
        case .double(let value): return (value.databaseValue, !value.isNaN && !(value == 0 && value.sign == .minus))
        case .date(let value):
            let seconds = value.timeIntervalSince1970
            return (seconds.databaseValue, Date(timeIntervalSince1970: seconds) == value)
        case .bytes(let value): return (value.databaseValue, true)
        // Never read back from the column: a model reads them from the record.
        case .reference(let value): return (value.recordID.recordName.databaseValue, true)
        case .asset, .location: return (1.databaseValue, true)
        case .stringList, .int64List, .doubleList, .dateList, .bytesList, .referenceList, .assetList, .locationList:
            return (FieldProjection.json(of: value).databaseValue, true)
        }
    }

    /// Whether a model reads a field of the kind from its column (each value that ``column(of:)`` says is exact).
    static func isReadable(_ kind: CloudValue.Kind) -> Bool {
        switch kind {
        case .string, .int64, .double, .date, .bytes: true
        default: false
        }
    }
}
