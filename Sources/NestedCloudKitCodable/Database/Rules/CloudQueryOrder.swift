import Foundation

/// A query's order, as every backend that keeps records applies it: the in-memory and SQLite databases, the sync
/// store's, and the emulator's `records/query` (which adds sorting by distance from a location).
///
/// Records without a sorted field come after those with it; equal keys fall back to the zone and then the record
/// name, so the order is total and a page can continue after a record's position however the records changed
/// since (`CloudQueryPaging`).
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

    /// The first `limit` matches after `start` in this order, and whether more follow. It keeps the best
    /// `limit + 1` in a heap as it reads, so a page costs a pass over the matches (a logarithm of the page for each
    /// that enters it), not a sort of all of them.
    package func page<Match>(
        of matches: some Sequence<Match>, record: (Match) -> CloudRecord, after start: Position?, limit: Int
    ) -> (matches: [Match], last: Position?, more: Bool) {
        var best = WorstFirst<Match>(order: self, capacity: max(0, limit) + 1)
        for match in matches {
            let position = position(of: record(match))
            if let start, !precedes(start, position) { continue }
            best.offer(position, match)
        }
        let sorted = best.sorted()
        let page = sorted.prefix(max(0, limit))
        return (page.map(\.match), page.last?.position, sorted.count > max(0, limit))
    }
}

/// The best matches seen so far, at most `capacity`, in a binary heap whose root is the worst of them: a better
/// match replaces it in a logarithm of the capacity.
private struct WorstFirst<Match> {
    let order: CloudQueryOrder
    let capacity: Int
    private var heap: [(position: CloudQueryOrder.Position, match: Match)] = []

    init(order: CloudQueryOrder, capacity: Int) {
        self.order = order
        self.capacity = capacity
    }

    /// Whether the entry at `a` comes after the one at `b`, so belongs nearer the root.
    private func isWorse(_ a: Int, than b: Int) -> Bool {
        order.precedes(heap[b].position, heap[a].position)
    }

    mutating func offer(_ position: CloudQueryOrder.Position, _ match: Match) {
        guard capacity > 0 else { return }
        if heap.count < capacity {
            heap.append((position, match))
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard isWorse(child, than: parent) else { break }
                heap.swapAt(child, parent)
                child = parent
            }
            return
        }
        // Full: only a match better than the worst kept enters, in its place.
        guard let worst = heap.first, order.precedes(position, worst.position) else { return }
        heap[0] = (position, match)
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var worse = parent
            if left < heap.count, isWorse(left, than: worse) { worse = left }
            if right < heap.count, isWorse(right, than: worse) { worse = right }
            guard worse != parent else { return }
            heap.swapAt(parent, worse)
            parent = worse
        }
    }

    /// The entries kept, best first.
    func sorted() -> [(position: CloudQueryOrder.Position, match: Match)] {
        heap.sorted { order.precedes($0.position, $1.position) }
    }
}

extension CloudQueryOrder.Position {
    /// Non-finite numbers as text: a distance or a field can be one, and plain JSON has no way to write them.
    private static let nonFinite = (positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")

    /// The position as a cursor's text. It can't fail: if it did, the text would be one no database reads (an
    /// `invalidArguments` for the caller), never the empty text of a first page, which would start over forever.
    package var encoded: String {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: Self.nonFinite.positiveInfinity, negativeInfinity: Self.nonFinite.negativeInfinity,
            nan: Self.nonFinite.nan)
        return (try? encoder.encode(self))?.base64EncodedString() ?? "!"
    }

    /// The position a cursor's text holds; `nil` for text this order didn't make.
    package init?(encoded: String) {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: Self.nonFinite.positiveInfinity, negativeInfinity: Self.nonFinite.negativeInfinity,
            nan: Self.nonFinite.nan)
        guard let data = Data(base64Encoded: encoded), let position = try? decoder.decode(Self.self, from: data)
        else { return nil }
        self = position
    }
}
