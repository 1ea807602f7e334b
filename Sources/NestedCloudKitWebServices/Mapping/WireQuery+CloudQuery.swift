import Foundation
import NestedCloudKitCodable

extension WireQuery {
    /// The query dictionary of a portable query: its predicate as filters (all of which must hold) and its sort
    /// descriptors.
    ///
    /// Comparisons use the Web Services comparators of the same names (`EQUALS`, `LESS_THAN`, ...), and
    /// ``CloudQuery/Predicate/near(field:location:radius:)`` is `NEAR` with its `distance`. System fields go by
    /// the names the reference gives them in queries: the record name is `___recordID`, compared with a
    /// `REFERENCE` to the record of that name in the queried zone; the users are `___createdBy` and
    /// `___modifiedBy`, compared with `REFERENCE`s to their user records; the creation and modification dates are
    /// `___createTime` and `___modTime`, compared with `TIMESTAMP`s.
    ///
    /// A reference condition (``CloudQuery/Predicate/references(_:in:)``, or `equals` with a reference) is sent
    /// as `EQUALS`, which matches a reference field. On a reference list field CloudKit wants `LIST_CONTAINS`
    /// instead, but a query doesn't say which kind of field it names, so that can't be chosen here.
    ///
    /// - Parameter zone: The zone queried, for the record of a `___recordID` comparison.
    /// - Throws: ``CloudDatabaseError/invalidArguments(_:)`` for a comparison with a list under a comparator that
    ///   takes one value, or with one value under a comparator that takes a list (`IN`, `LIST_CONTAINS_ANY`, ...),
    ///   or of the record name or a user with anything but strings.
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
        case .creatorUserRecordName?: "___createdBy"
        case .lastModifiedUserRecordName?: "___modifiedBy"
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
        case .near(let field, let location, let radius):
            filters.append(
                Filter(
                    comparator: "NEAR", fieldName: wireFieldName(field), fieldValue: WireField(.location(location)),
                    distance: radius))
        case .and(let predicates):
            for predicate in predicates { try appendFilters(of: predicate, in: zone, to: &filters) }
        }
    }

    private static func filter(
        _ field: String, _ comparator: CloudQuery.Comparator, _ value: CloudValue, in zone: CloudRecord.ZoneID
    ) throws -> Filter {
        if comparator.takesList != value.kind.isList {
            throw CloudDatabaseError.invalidArguments(
                comparator.takesList
                    ? "\(comparator.rawValue) compares the field \(field) with a list of candidates, not one value"
                    : "a query compares the field \(field) with one value, not a list")
        }
        let fieldValue =
            if let systemField = CloudQuery.SystemField(fieldName: field) {
                try systemFieldValue(systemField, value, in: zone)
            } else {
                WireField(value)
            }
        return Filter(comparator: comparator.rawValue, fieldName: wireFieldName(field), fieldValue: fieldValue)
    }

    /// A system field's value as Web Services compares it: the record name as a `REFERENCE` to the record of that
    /// name in the queried zone, the users as `REFERENCE`s to their user records, the dates as they are.
    private static func systemFieldValue(
        _ field: CloudQuery.SystemField, _ value: CloudValue, in zone: CloudRecord.ZoneID
    ) throws -> WireField {
        let recordZone: CloudRecord.ZoneID
        switch field {
        case .creationDate, .modificationDate: return WireField(value)
        case .recordName: recordZone = zone
        case .creatorUserRecordName, .lastModifiedUserRecordName: recordZone = .default
        }
        func reference(_ name: String) -> CloudReference {
            CloudReference(recordID: CloudRecord.ID(recordName: name, zoneID: recordZone))
        }
        switch value {
        case .string(let name): return WireField(.reference(reference(name)))
        case .stringList(let names): return WireField(.referenceList(names.map(reference)))
        default:
            throw CloudDatabaseError.invalidArguments(
                "a query compares \(field.fieldName) with a string (or a list of strings), not a value of type \(value.kind.rawValue)"
            )
        }
    }
}
