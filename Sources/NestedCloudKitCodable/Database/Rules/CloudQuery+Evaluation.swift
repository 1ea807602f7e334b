import Foundation

// The one evaluator of query conditions. The in-memory, SQLite and sync-store databases and the emulator all ask
// `CloudQuery.Predicate.matches(_:)`, so a comparator can't mean one thing on one backend and another elsewhere.

extension CloudQuery.Comparator {
    /// Whether a field's value (`nil` when the record lacks the field) compares with `value` as this comparator
    /// says.
    func holds(_ stored: CloudValue?, _ value: CloudValue) -> Bool {
        switch self {
        case .equals:
            guard let stored else { return false }
            return stored.queryEquals(value) || (stored.kind.isList && stored.holds(value))
        case .lessThan: return stored?.queryOrder(value) == .orderedAscending
        case .greaterThan: return stored?.queryOrder(value) == .orderedDescending
        case .lessThanOrEquals: return stored?.queryOrder(value).map { $0 != .orderedDescending } ?? false
        case .greaterThanOrEquals: return stored?.queryOrder(value).map { $0 != .orderedAscending } ?? false
        case .in: return stored.map { stored in value.queryElements.contains { stored.queryEquals($0) } } ?? false
        case .beginsWith:
            guard case .string(let text)? = stored, case .string(let prefix) = value else { return false }
            return text.hasPrefix(prefix)
        case .containsAllTokens, .containsAnyTokens:
            let have = Set((stored?.queryElements ?? []).flatMap(\.queryTokens))
            let wanted = value.queryTokens
            return self == .containsAllTokens ? wanted.allSatisfy(have.contains) : wanted.contains(where: have.contains)
        case .listContains: return stored?.holds(value) ?? false
        case .listContainsAny: return value.queryElements.contains { stored?.holds($0) ?? false }
        case .listContainsAll: return value.queryElements.allSatisfy { stored?.holds($0) ?? false }
        case .listMemberBeginsWith:
            guard case .string(let prefix) = value else { return false }
            return (stored?.queryElements ?? []).contains {
                if case .string(let text) = $0 { text.hasPrefix(prefix) } else { false }
            }
        case .notEquals: return !Self.equals.holds(stored, value)
        case .notIn: return !Self.in.holds(stored, value)
        case .notBeginsWith: return !Self.beginsWith.holds(stored, value)
        case .notListContains: return !Self.listContains.holds(stored, value)
        case .notListContainsAny: return !Self.listContainsAny.holds(stored, value)
        case .notListContainsAll: return !Self.listContainsAll.holds(stored, value)
        case .notListMemberBeginsWith: return !Self.listMemberBeginsWith.holds(stored, value)
        }
    }
}

extension CloudValue {
    /// Equality as a query sees it: references by the record they point to, whatever their action; an integer
    /// and a double by their numeric value; anything else as ``CloudValue`` compares.
    package func queryEquals(_ other: CloudValue) -> Bool {
        switch (self, other) {
        case (.reference(let lhs), .reference(let rhs)): lhs.recordID == rhs.recordID
        case (.referenceList(let lhs), .referenceList(let rhs)): lhs.map(\.recordID) == rhs.map(\.recordID)
        default: queryOrder(other).map { $0 == .orderedSame } ?? (self == other)
        }
    }

    /// The order of two values a query can order: strings, numbers (an integer with a double too), dates, and
    /// references by record name; `nil` for values that don't compare.
    package func queryOrder(_ other: CloudValue) -> ComparisonResult? {
        func order<T: Comparable>(_ lhs: T, _ rhs: T) -> ComparisonResult {
            lhs == rhs ? .orderedSame : lhs < rhs ? .orderedAscending : .orderedDescending
        }
        switch (self, other) {
        case (.string(let lhs), .string(let rhs)): return order(lhs, rhs)
        case (.int64(let lhs), .int64(let rhs)): return order(lhs, rhs)
        case (.double(let lhs), .double(let rhs)): return order(lhs, rhs)
        case (.int64(let lhs), .double(let rhs)): return order(Double(lhs), rhs)
        case (.double(let lhs), .int64(let rhs)): return order(lhs, Double(rhs))
        case (.date(let lhs), .date(let rhs)): return order(lhs, rhs)
        case (.reference(let lhs), .reference(let rhs)): return order(lhs.recordID.recordName, rhs.recordID.recordName)
        default: return nil
        }
    }

    /// The elements of a list one by one; a single value stands for a list of itself, so `in`'s candidates and
    /// the words of a string field read alike. Assets aren't queryable and have no elements.
    package var queryElements: [CloudValue] {
        switch self {
        case .asset, .assetList: []
        default: listElements ?? [self]
        }
    }

    /// Whether this list holds `element` (a single value holds only itself).
    func holds(_ element: CloudValue) -> Bool {
        queryElements.contains { $0.queryEquals(element) }
    }

    /// The words of a string for the token comparators: its runs of letters and digits, lowercased.
    package var queryTokens: [String] {
        guard case .string(let text) = self else { return [] }
        return text.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }
}

extension CloudLocation {
    /// The great-circle distance to another location in metres (the haversine formula, on a sphere of the Earth's
    /// mean radius), as `NEAR` and sorting by distance measure it.
    package func metres(to other: CloudLocation) -> Double {
        let radians = Double.pi / 180
        let latitudeDelta = (other.latitude - latitude) * radians
        let longitudeDelta = (other.longitude - longitude) * radians
        let haversine =
            pow(sin(latitudeDelta / 2), 2) + cos(latitude * radians) * cos(other.latitude * radians)
            * pow(sin(longitudeDelta / 2), 2)
        return 2 * Self.earthMeanRadius * asin(min(1, sqrt(haversine)))
    }

    /// The Earth's mean radius in metres (IUGG).
    private static let earthMeanRadius = 6_371_008.8
}

extension CloudRecord {
    /// The value a query sees for a field name: a field, or a ``CloudQuery/SystemField``.
    package func queryValue(_ field: String) -> CloudValue? {
        switch CloudQuery.SystemField(fieldName: field) {
        case .recordName?: .string(id.recordName)
        case .creationDate?: systemFields?.creationDate.map(CloudValue.date)
        case .modificationDate?: systemFields?.modificationDate.map(CloudValue.date)
        case .creatorUserRecordName?: systemFields?.creatorUserRecordName.map(CloudValue.string)
        case .lastModifiedUserRecordName?: systemFields?.lastModifiedUserRecordName.map(CloudValue.string)
        case nil: self[field]
        }
    }
}
