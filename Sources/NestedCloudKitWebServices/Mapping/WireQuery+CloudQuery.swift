import Foundation
import NestedCloudKitCodable

extension WireQuery {
    /// The query dictionary of a portable query: its predicate as filters (all of which must hold) and its sort
    /// descriptors.
    ///
    /// Comparisons use the Web Services comparators of the same names (`EQUALS`, `LESS_THAN`, ...). System
    /// fields go by the names the reference gives them in queries: the record name is `___recordID`, compared
    /// with a `REFERENCE` to the record of that name in the queried zone; the creation and modification dates are
    /// `___createTime` and `___modTime`, compared with `TIMESTAMP`s.
    ///
    /// A reference condition (``CloudQuery/Predicate/references(_:in:)``, or `equals` with a reference) is sent
    /// as `EQUALS`, which matches a reference field. On a reference list field CloudKit wants `LIST_CONTAINS`
    /// instead, but a query doesn't say which kind of field it names, so that can't be chosen here.
    ///
    /// - Parameter zone: The zone queried, for the record of a `___recordID` comparison.
    /// - Throws: ``CloudDatabaseError/invalidArguments(_:)`` for a comparison with a list (a filter compares a
    ///   field with one value), or of the record name with anything but a string.
    init(_ query: CloudQuery, in zone: CloudRecord.ZoneID = .default) throws {
        var filters: [Filter] = []
        try Self.appendFilters(of: query.predicate, in: zone, to: &filters)
        self.init(
            recordType: query.recordType,
            filterBy: filters.isEmpty ? nil : filters,
            sortBy: query.sortDescriptors.isEmpty
                ? nil
                : query.sortDescriptors.map { Sort(fieldName: Self.wireFieldName($0.field), ascending: $0.ascending) }
        )
    }

    /// The names Web Services queries give the system fields.
    static func wireFieldName(_ field: String) -> String {
        switch CloudQuery.SystemField(fieldName: field) {
        case .recordName?: "___recordID"
        case .creationDate?: "___createTime"
        case .modificationDate?: "___modTime"
        case nil: field
        }
    }

    private static func appendFilters(
        of predicate: CloudQuery.Predicate, in zone: CloudRecord.ZoneID, to filters: inout [Filter]
    ) throws {
        switch predicate {
        case .all:
            break
        case .equals(let field, let value):
            filters.append(try filter(field, .equals, value, in: zone))
        case .references(let target, let field):
            filters.append(
                Filter(
                    comparator: CloudQuery.Comparator.equals.rawValue, fieldName: field,
                    fieldValue: WireField(.reference(CloudReference(recordID: target)))
                ))
        case .compare(let field, let comparator, let value):
            filters.append(try filter(field, comparator, value, in: zone))
        case .and(let predicates):
            for predicate in predicates { try appendFilters(of: predicate, in: zone, to: &filters) }
        }
    }

    private static func filter(
        _ field: String, _ comparator: CloudQuery.Comparator, _ value: CloudValue, in zone: CloudRecord.ZoneID
    ) throws -> Filter {
        if value.kind.isList {
            throw CloudDatabaseError.invalidArguments("a query compares the field \(field) with one value, not a list")
        }
        var fieldValue = WireField(value)
        if CloudQuery.SystemField(fieldName: field) == .recordName {
            guard case .string(let recordName) = value else {
                throw CloudDatabaseError.invalidArguments(
                    "a query compares the record name (\(field)) with a string, not a value of type \(value.kind.rawValue)"
                )
            }
            fieldValue = WireField(
                .reference(CloudReference(recordID: CloudRecord.ID(recordName: recordName, zoneID: zone))))
        }
        return Filter(comparator: comparator.rawValue, fieldName: wireFieldName(field), fieldValue: fieldValue)
    }
}
