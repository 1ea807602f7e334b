import Foundation
import NestedCloudKitCodable

/// One `filterBy` entry of `records/query`: a comparator applied to a field or a system field.
struct QueryFilter: Sendable {
    /// The documented comparators.
    enum Comparator: String, Sendable, CaseIterable {
        case equals = "EQUALS", notEquals = "NOT_EQUALS"
        case lessThan = "LESS_THAN", lessThanOrEquals = "LESS_THAN_OR_EQUALS"
        case greaterThan = "GREATER_THAN", greaterThanOrEquals = "GREATER_THAN_OR_EQUALS"
        case near = "NEAR"
        case containsAllTokens = "CONTAINS_ALL_TOKENS", containsAnyTokens = "CONTAINS_ANY_TOKENS"
        case `in` = "IN", notIn = "NOT_IN"
        case listContains = "LIST_CONTAINS", notListContains = "NOT_LIST_CONTAINS"
        case listContainsAny = "LIST_CONTAINS_ANY", notListContainsAny = "NOT_LIST_CONTAINS_ANY"
        case listContainsAll = "LIST_CONTAINS_ALL", notListContainsAll = "NOT_LIST_CONTAINS_ALL"
        case beginsWith = "BEGINS_WITH", notBeginsWith = "NOT_BEGINS_WITH"
        case listMemberBeginsWith = "LIST_MEMBER_BEGINS_WITH", notListMemberBeginsWith = "NOT_LIST_MEMBER_BEGINS_WITH"

        /// Whether the comparator needs the field to be sortable rather than queryable in a production schema.
        var needsSortable: Bool {
            [.lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals].contains(self)
        }

        var needsSearchable: Bool { self == .containsAllTokens || self == .containsAnyTokens }
    }

    var comparator: Comparator
    var field: QueryField
    var value: CloudValue
    /// `NEAR`'s radius in metres.
    var distance: Double?

    init(_ wire: JSONValue, coding: WireCoding) throws(ServerError) {
        guard let name = wire["comparator"]?.string, let comparator = Comparator(rawValue: name) else {
            throw .badRequest(
                "unknown comparator \(wire["comparator"] ?? .null); the reference lists \(Comparator.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        self.comparator = comparator
        field = try QueryField(wire)
        guard let item = wire["fieldValue"],
            let value = try coding.fieldValue(item, field: field.name, record: "(query)")
        else { throw .badRequest("filter on \(field.name) needs a fieldValue with a value") }
        self.value = value
        distance = wire["distance"]?.double
        if comparator == .near && distance == nil {
            throw .badRequest("NEAR on \(field.name) needs a distance in metres")
        }
    }

    func matches(_ record: CloudRecord) -> Bool {
        let stored = field.value(of: record)
        switch comparator {
        case .equals:
            return stored.map { Self.equal($0, value) || Self.list($0).contains { Self.equal($0, value) } } ?? false
        case .notEquals:
            return !(stored.map { Self.equal($0, value) || Self.list($0).contains { Self.equal($0, value) } } ?? false)
        case .lessThan: return stored.map { Self.order($0, value) == .orderedAscending } ?? false
        case .lessThanOrEquals:
            return stored.map { Self.order($0, value).map { $0 != .orderedDescending } ?? false } ?? false
        case .greaterThan: return stored.map { Self.order($0, value) == .orderedDescending } ?? false
        case .greaterThanOrEquals:
            return stored.map { Self.order($0, value).map { $0 != .orderedAscending } ?? false } ?? false
        case .near:
            guard case .location(let here)? = stored, case .location(let center) = value, let distance else {
                return false
            }
            return Self.metres(here, center) <= distance
        case .containsAllTokens, .containsAnyTokens:
            let wanted = Self.tokens(of: value)
            let have = Set(Self.list(stored).flatMap(Self.tokens) + (stored.map(Self.tokens) ?? []))
            return comparator == .containsAllTokens
                ? wanted.allSatisfy(have.contains) : wanted.contains(where: have.contains)
        case .in, .notIn:
            let found = stored.map { stored in Self.list(value).contains { Self.equal(stored, $0) } } ?? false
            return comparator == .in ? found : !found
        case .listContains, .notListContains:
            let found = Self.list(stored).contains { Self.equal($0, value) }
            return comparator == .listContains ? found : !found
        case .listContainsAny, .notListContainsAny:
            let have = Self.list(stored)
            let found = Self.list(value).contains { wanted in have.contains { Self.equal($0, wanted) } }
            return comparator == .listContainsAny ? found : !found
        case .listContainsAll, .notListContainsAll:
            let have = Self.list(stored)
            let found = Self.list(value).allSatisfy { wanted in have.contains { Self.equal($0, wanted) } }
            return comparator == .listContainsAll ? found : !found
        case .beginsWith, .notBeginsWith:
            guard case .string(let prefix) = value else { return false }
            let found = if case .string(let text)? = stored { text.hasPrefix(prefix) } else { false }
            return comparator == .beginsWith ? found : !found
        case .listMemberBeginsWith, .notListMemberBeginsWith:
            guard case .string(let prefix) = value else { return false }
            let found = Self.list(stored).contains {
                if case .string(let text) = $0 { text.hasPrefix(prefix) } else { false }
            }
            return comparator == .listMemberBeginsWith ? found : !found
        }
    }

    /// The elements of a list value one by one; a single value is a list of itself, for `IN`'s `fieldValue`.
    static func list(_ value: CloudValue?) -> [CloudValue] {
        switch value {
        case .stringList(let list)?: list.map(CloudValue.string)
        case .int64List(let list)?: list.map(CloudValue.int64)
        case .doubleList(let list)?: list.map(CloudValue.double)
        case .dateList(let list)?: list.map(CloudValue.date)
        case .bytesList(let list)?: list.map(CloudValue.bytes)
        case .referenceList(let list)?: list.map(CloudValue.reference)
        case .locationList(let list)?: list.map(CloudValue.location)
        case .assetList?, nil: []
        case let single?: [single]
        }
    }

    /// Equality as a query sees it: references by record ID, whatever their action; numbers across types.
    static func equal(_ left: CloudValue, _ right: CloudValue) -> Bool {
        switch (left, right) {
        case (.reference(let a), .reference(let b)): a.recordID == b.recordID
        case (.reference(let a), .string(let name)), (.string(let name), .reference(let a)):
            a.recordID.recordName == name
        default: order(left, right) == .orderedSame || left == right
        }
    }

    /// The order of two values of comparable types; `nil` when they can't be compared.
    static func order(_ left: CloudValue, _ right: CloudValue) -> ComparisonResult? {
        func compare<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
            a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        }
        switch (left, right) {
        case (.string(let a), .string(let b)): return compare(a, b)
        case (.int64(let a), .int64(let b)): return compare(a, b)
        case (.double(let a), .double(let b)): return compare(a, b)
        case (.int64(let a), .double(let b)): return compare(Double(a), b)
        case (.double(let a), .int64(let b)): return compare(a, Double(b))
        case (.date(let a), .date(let b)): return compare(a, b)
        case (.reference(let a), .reference(let b)): return compare(a.recordID.recordName, b.recordID.recordName)
        case (.reference(let a), .string(let b)): return compare(a.recordID.recordName, b)
        case (.string(let a), .reference(let b)): return compare(a, b.recordID.recordName)
        default: return nil
        }
    }

    /// Words for the token comparators: lowercased runs of letters and digits.
    static func tokens(of value: CloudValue) -> [String] {
        guard case .string(let text) = value else { return [] }
        return text.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }

    /// The great-circle distance in metres (haversine, on a sphere of the Earth's mean radius).
    static func metres(_ a: CloudLocation, _ b: CloudLocation) -> Double {
        let radians = Double.pi / 180
        let dLat = (b.latitude - a.latitude) * radians
        let dLon = (b.longitude - a.longitude) * radians
        let h = pow(sin(dLat / 2), 2) + cos(a.latitude * radians) * cos(b.latitude * radians) * pow(sin(dLon / 2), 2)
        return 2 * 6_371_008.8 * asin(min(1, sqrt(h)))
    }
}
