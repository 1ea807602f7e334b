import Foundation
import NestedCloudKitCodable

/// How a backend that keeps records itself answers a `CloudQuery` a page at a time, written once for the in-memory
/// and SQLite databases and the sync store's: a cursor holds the position, in the query's order
/// (`CloudQueryOrder`), of the last match its page gave, and the next page starts after it. So a record saved or
/// deleted between two pages doesn't shift the pages: nothing is skipped or given twice that didn't move across
/// the position.
package struct CloudQueryPaging: Sendable {
    /// The position of the last match given so far; `nil` for the first page.
    package let after: CloudQueryOrder.Position?
    /// The most matches the page holds.
    package let limit: Int

    /// The page a request asks for: after the cursor's position, at most `resultsLimit` matches, and never more
    /// than the database's own limit (which `CloudQuery/maximumResults` asks for).
    ///
    /// - Throws: `CloudDatabaseError/invalidArguments(_:)` for a negative `resultsLimit`, or a cursor this kind
    ///   of database didn't make.
    package init(from cursor: CloudQuery.Cursor, resultsLimit: Int, maximumItemsPerRequest: Int) throws {
        guard resultsLimit >= 0 else { throw CloudDatabaseError.invalidArguments("resultsLimit can't be negative") }
        if cursor.position.isEmpty {
            after = nil
        } else if let position = CloudQueryOrder.Position(encoded: cursor.position) {
            after = position
        } else {
            throw CloudDatabaseError.invalidArguments("the cursor wasn't made by this database")
        }
        limit =
            resultsLimit == CloudQuery.maximumResults
            ? maximumItemsPerRequest : min(resultsLimit, maximumItemsPerRequest)
    }

    /// The cursor of a query's first page.
    package static func firstPage(of query: CloudQuery, in zoneID: CloudRecord.ZoneID) -> CloudQuery.Cursor {
        CloudQuery.Cursor(query: query, zoneID: zoneID, position: "")
    }

    /// The page's matches, from the query's matches in any order, and the cursor that continues after them when
    /// more follow.
    package func page<Match>(
        of matches: some Sequence<Match>, record: (Match) -> CloudRecord, continuing cursor: CloudQuery.Cursor
    ) -> (matches: [Match], next: CloudQuery.Cursor?) {
        let page = CloudQueryOrder(cursor.query).page(of: matches, record: record, after: after, limit: limit)
        guard page.more, let last = page.last else { return (page.matches, nil) }
        return (page.matches, CloudQuery.Cursor(query: cursor.query, zoneID: cursor.zoneID, position: last.encoded))
    }
}
