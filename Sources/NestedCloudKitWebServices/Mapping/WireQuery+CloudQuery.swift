import Foundation
import NestedCloudKitCodable

extension WireQuery {
    /// The query dictionary of a portable query: its predicate as `EQUALS` filters (all of which must hold) and its
    /// sort descriptors.
    ///
    /// - Throws: ``CloudDatabaseError/invalidArguments(_:)`` for a comparison with a list: a filter compares a
    ///   field with one value.
    init(_ query: CloudQuery) throws {
        var filters: [Filter] = []
        try Self.appendFilters(of: query.predicate, to: &filters)
        self.init(
            recordType: query.recordType,
            filterBy: filters.isEmpty ? nil : filters,
            sortBy: query.sortDescriptors.isEmpty
                ? nil : query.sortDescriptors.map { Sort(fieldName: $0.field, ascending: $0.ascending) }
        )
    }

    private static func appendFilters(of predicate: CloudQuery.Predicate, to filters: inout [Filter]) throws {
        switch predicate {
        case .all:
            break
        case .equals(let field, let value):
            if value.kind.isList {
                throw CloudDatabaseError.invalidArguments(
                    "a query compares the field \(field) with one value, not a list")
            }
            filters.append(Filter(comparator: "EQUALS", fieldName: field, fieldValue: WireField(value)))
        case .references(let target, let field):
            filters.append(
                Filter(
                    comparator: "EQUALS", fieldName: field,
                    fieldValue: WireField(.reference(CloudReference(recordID: target)))
                ))
        case .and(let predicates):
            for predicate in predicates { try appendFilters(of: predicate, to: &filters) }
        }
    }
}
