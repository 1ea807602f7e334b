import Foundation

/// How a backend that keeps records itself answers a ``CloudQuery`` a page at a time, written once for the in-memory
/// and SQLite databases and the sync store's: a cursor holds the position, in the query's order, of the match the
/// next page starts at.
package struct CloudQueryPaging: Sendable {
    /// The position of the page's first match.
    package let start: Int
    /// The most matches the page holds.
    package let limit: Int

    /// The page a request asks for: from the cursor's position, at most `resultsLimit` matches, and never more
    /// than the database's own limit (which ``CloudQuery/maximumResults`` asks for).
    ///
    /// - Throws: ``CloudDatabaseError/invalidArguments(_:)`` for a negative `resultsLimit`, or a cursor this kind
    ///   of database didn't make.
    package init(from cursor: CloudQuery.Cursor, resultsLimit: Int, maximumItemsPerRequest: Int) throws {
        guard resultsLimit >= 0 else { throw CloudDatabaseError.invalidArguments("resultsLimit can't be negative") }
        guard let start = Int(cursor.position), start >= 0 else {
            throw CloudDatabaseError.invalidArguments("the cursor wasn't made by this database")
        }
        self.start = start
        limit =
            resultsLimit == CloudQuery.maximumResults
            ? maximumItemsPerRequest : min(resultsLimit, maximumItemsPerRequest)
    }

    /// The cursor of a query's first page.
    package static func firstPage(of query: CloudQuery, in zoneID: CloudRecord.ZoneID) -> CloudQuery.Cursor {
        CloudQuery.Cursor(query: query, zoneID: zoneID, position: "0")
    }

    /// The page's matches, from all of the query's in its order, and the cursor that continues after them when more
    /// follow.
    package func page<Match>(of matches: [Match], continuing cursor: CloudQuery.Cursor)
        -> (matches: ArraySlice<Match>, next: CloudQuery.Cursor?)
    {
        let page = matches.dropFirst(start).prefix(limit)
        let end = start + page.count
        let next =
            end < matches.count
            ? CloudQuery.Cursor(query: cursor.query, zoneID: cursor.zoneID, position: String(end)) : nil
        return (page, next)
    }
}
