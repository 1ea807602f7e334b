import GRDB

/// Runs a statement over a list of row numbers, given to SQLite as one JSON array that the statement reads with
/// `json_each`: one cached statement whatever the count, and one argument to bind instead of one per number (GRDB
/// binds a list of numbers through an existential each, a thirteenth of a graph's read when they were parameters).
enum RowNumbers {
    /// The rows of the statement `sql` makes from a parenthesized subquery of the numbers
    /// (`(SELECT value FROM json_each(?))`).
    static func forEach(
        _ numbers: [Int64], in db: Database, sql: (_ numbers: String) -> String,
        _ body: (Row, Statement) throws -> Void
    ) throws {
        guard !numbers.isEmpty else { return }
        let statement = try db.cachedStatement(sql: sql("(SELECT value FROM json_each(?))"))
        let cursor = try Row.fetchCursor(statement, arguments: [json(numbers)])
        while let row = try cursor.next() { try body(row, statement) }
    }

    /// The numbers as a JSON array, written digit by digit (a `String` made for each number was a fortieth of a
    /// graph's read in `perf record -g`).
    static func json(_ numbers: [Int64]) -> String {
        var text: [UInt8] = [UInt8(ascii: "[")]
        text.reserveCapacity(numbers.count * 8 + 2)
        var digits: [UInt8] = []
        digits.reserveCapacity(20)
        for (index, number) in numbers.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            if number < 0 { text.append(UInt8(ascii: "-")) }
            var magnitude = number.magnitude
            digits.removeAll(keepingCapacity: true)
            repeat {
                digits.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
                magnitude /= 10
            } while magnitude > 0
            text.append(contentsOf: digits.reversed())
        }
        text.append(UInt8(ascii: "]"))
        return String(decoding: text, as: UTF8.self)
    }
}
