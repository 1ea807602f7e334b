import Foundation

/// A query's order, as every backend that keeps records applies it: the in-memory and SQLite databases, the sync
/// store's, and the emulator's `records/query` (which adds sorting by distance from a location).
///
/// Records without a sorted field come after those with it; equal keys fall back to the zone and then the record
/// name, so the order is total and a page can continue after a record's position however the records changed
/// since (``CloudQueryPaging``).
package struct CloudQueryOrder: Sendable {
    /// One sort: a field, ascending or not, or the distance of a `LOCATION` field from a location.
    package struct Sort: Sendable {
        package var field: String
        package var ascending: Bool
        /// Sorting by distance from this location: Web Services' `relativeLocation`.
        package var origin: CloudLocation?

        package init(field: String, ascending: Bool = true, origin: CloudLocation? = nil) {
            self.field = field
            self.ascending = ascending
            self.origin = origin
        }
    }

    /// Where a record falls in an order: the value of each sort (a distance as a `.double` of metres; `nil` when
    /// the record lacks the field), then its zone and name. What a cursor holds.
    package struct Position: Sendable, Hashable, Codable {
        package var values: [CloudValue?]
        package var zoneName: String
        package var ownerName: String
        package var recordName: String
    }

    package let sorts: [Sort]

    package init(_ sorts: [Sort]) {
        self.sorts = sorts
    }

    /// The order of a query's sort descriptors.
    package init(_ query: CloudQuery) {
        sorts = query.sortDescriptors.map { Sort(field: $0.field, ascending: $0.ascending) }
    }

    package func position(of record: CloudRecord) -> Position {
        Position(
            values: sorts.map { sort in
                guard let origin = sort.origin else { return record.queryValue(sort.field) }
                guard case .location(let here)? = record.queryValue(sort.field) else { return nil }
                return .double(here.metres(to: origin))
            },
            zoneName: record.id.zoneID.zoneName, ownerName: record.id.zoneID.ownerName,
            recordName: record.id.recordName)
    }

    /// Whether a record at `lhs` comes before one at `rhs`.
    package func precedes(_ lhs: Position, _ rhs: Position) -> Bool {
        for (index, sort) in sorts.enumerated() {
            let left = index < lhs.values.count ? lhs.values[index] : nil
            let right = index < rhs.values.count ? rhs.values[index] : nil
            switch (left, right) {
            case (nil, nil): continue
            case (nil, _): return false
            case (_, nil): return true
            case (let left?, let right?):
                switch left.queryOrder(right) {
                case .orderedAscending?: return sort.ascending
                case .orderedDescending?: return !sort.ascending
                case .orderedSame?, nil: continue
                }
            }
        }
        return (lhs.zoneName, lhs.ownerName, lhs.recordName) < (rhs.zoneName, rhs.ownerName, rhs.recordName)
    }

    /// The first `limit` matches after `start` in this order, and whether more follow. It keeps only the best
    /// `limit + 1` as it reads, so a page costs a pass over the matches, not a sort of all of them.
    package func page<Match>(
        of matches: some Sequence<Match>, record: (Match) -> CloudRecord, after start: Position?, limit: Int
    ) -> (matches: [Match], last: Position?, more: Bool) {
        let kept = max(0, limit) + 1
        var best: [(position: Position, match: Match)] = []
        for match in matches {
            let position = position(of: record(match))
            if let start, !precedes(start, position) { continue }
            if best.count == kept, let worst = best.last, !precedes(position, worst.position) { continue }
            var low = 0
            var high = best.count
            while low < high {
                let middle = (low + high) / 2
                if precedes(best[middle].position, position) { low = middle + 1 } else { high = middle }
            }
            best.insert((position, match), at: low)
            if best.count > kept { best.removeLast() }
        }
        let more = best.count > max(0, limit)
        let page = best.prefix(max(0, limit))
        return (page.map(\.match), page.last?.position, more)
    }
}

extension CloudQueryOrder.Position {
    /// The position as a cursor's text.
    package var encoded: String {
        ((try? JSONEncoder().encode(self)) ?? Data()).base64EncodedString()
    }

    /// The position a cursor's text holds; `nil` for text this order didn't make.
    package init?(encoded: String) {
        guard let data = Data(base64Encoded: encoded),
            let position = try? JSONDecoder().decode(Self.self, from: data)
        else { return nil }
        self = position
    }
}
