import Foundation
import GRDB

/// The current row of a statement, read in place: each value straight from SQLite's statement.
///
/// GRDB's `Row.fetchOne` builds a row for every statement it runs, with a map of the row's lowercased column names,
/// whether a row comes or not: in a write of fetched records, which looks each record up and reads back what it
/// wrote, that was a tenth of the transaction.
struct StatementValues {
    private let statement: SQLiteStatement

    /// The value of a column of the current row.
    subscript(_ column: Int) -> DatabaseValue { DatabaseValue(sqliteStatement: statement, index: CInt(column)) }

    /// Runs a statement, and reads its first row with `read`; `nil` if it has none.
    static func first<T>(
        _ statement: Statement, arguments: StatementArguments, _ read: (StatementValues) throws -> T
    ) throws -> T? {
        // A cursor of the first column steps the statement and builds no row (its value, unused, is read as an
        // integer, which changes nothing SQLite keeps of a text or a blob).
        let cursor = try Int64?.fetchCursor(statement, arguments: arguments)
        guard try cursor.next() != nil else { return nil }
        return try read(StatementValues(statement: statement.sqliteStatement))
    }

    /// What a column of the store's own tables holding a value of another type than the store writes there throws.
    private static func unexpected(_ column: Int) -> SyncError {
        SyncError.store(
            "column \(column) of a row the store wrote holds a value of an unexpected type: something other than the "
                + "store changed its file; restore the file from a backup, or delete it to fetch everything again")
    }

    /// An integer column's value (as GRDB converts one: a whole real too).
    func int64(_ column: Int) throws -> Int64 {
        switch self[column].storage {
        case .int64(let value): return value
        case .double(let value):
            guard let value = Int64(exactly: value) else { throw Self.unexpected(column) }
            return value
        default: throw Self.unexpected(column)
        }
    }

    /// A real column's value, `nil` for `NULL`.
    func double(_ column: Int) throws -> Double? {
        switch self[column].storage {
        case .null: return nil
        case .double(let value): return value
        case .int64(let value): return Double(value)
        default: throw Self.unexpected(column)
        }
    }

    /// A blob column's value, `nil` for `NULL` (as GRDB converts one: text too, as its UTF-8).
    func data(_ column: Int) throws -> Data? {
        switch self[column].storage {
        case .null: return nil
        case .blob(let value): return value
        case .string(let value): return Data(value.utf8)
        default: throw Self.unexpected(column)
        }
    }
}
