import GRDB

/// Runs a statement over a list of row numbers a few hundred at a time, with the numbers as its parameters: the
/// numbers padded with the last one to one of a few sizes, so that a handful of statements is cached whatever the
/// count, and the largest size stays under SQLite's default limit of parameters.
enum RowBatches {
    private static let sizes = [1, 8, 64, 500]

    /// The rows of the statement `sql` makes from a parenthesized list of parameters (`(?,?,?)`), for each batch.
    static func forEach(
        _ numbers: [Int64], in db: Database, sql: (_ parameters: String) -> String,
        _ body: (Row, Statement) throws -> Void
    ) throws {
        var start = 0
        while start < numbers.count {
            let end = min(numbers.count, start + sizes[sizes.count - 1])
            let size = sizes.first { $0 >= end - start } ?? (end - start)
            var arguments = Array(numbers[start..<end])
            arguments.reserveCapacity(size)
            while arguments.count < size { arguments.append(numbers[end - 1]) }
            let statement = try db.cachedStatement(
                sql: sql("(" + Array(repeating: "?", count: size).joined(separator: ",") + ")"))
            // As existentials: GRDB maps a sequence of numbers through a key path, a call through the run time each.
            let cursor = try Row.fetchCursor(
                statement, arguments: StatementArguments(arguments.map { $0 as (any DatabaseValueConvertible)? }))
            while let row = try cursor.next() { try body(row, statement) }
            start = end
        }
    }
}
