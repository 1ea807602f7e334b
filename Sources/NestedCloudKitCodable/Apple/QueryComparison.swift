#if canImport(CloudKit)
import CloudKit
import CoreLocation
import Foundation

/// One comparison of a CloudKit query, before it becomes an `NSPredicate`: a field, a format CloudKit runs, and
/// a value of a class `CKQuery` accepts as an argument.
///
/// A query's predicate is a list of these, all of which must hold: `CKQuery` accepts only `AND` compounds, and
/// `NOT` only around `IN`, so a condition that needs `OR` (a field that is either a reference or a reference list
/// holding one, a list holding any of several values) can't be sent; the caller says which fields are lists
/// (``CloudKitDatabase/listFields``).
struct QueryComparison {
    /// The field compared: a record field, or one of CloudKit's keys for a system field (`recordID`,
    /// `creationDate`, `modificationDate`, `creatorUserRecordID`, `lastModifiedUserRecordID`).
    let field: String
    /// The predicate's format string, with `%K` for the field and `%@` for the argument (and `NEAR`'s radius).
    let format: String
    /// The value compared with: a `CKRecordValue`, a `CKRecord.ID` for a system field, or an array of them for
    /// `IN`.
    let argument: Any
    /// The arguments after the field and ``argument``: `NEAR`'s radius.
    var trailingArguments: [Any] = []

    /// The format string's arguments, in order.
    var arguments: [Any] { [field, argument] + trailingArguments }

    /// The format of a comparison on a single (not list) field, as CloudKit's supported operators spell it;
    /// `nil` for a comparator CloudKit has no operator for.
    static func singleFieldFormat(_ comparator: CloudQuery.Comparator) -> String? {
        switch comparator {
        case .equals: "%K == %@"
        case .notEquals: "%K != %@"
        case .lessThan: "%K < %@"
        case .lessThanOrEquals: "%K <= %@"
        case .greaterThan: "%K > %@"
        case .greaterThanOrEquals: "%K >= %@"
        case .in: "%K IN %@"
        case .notIn: "NOT (%K IN %@)"
        case .beginsWith: "%K BEGINSWITH %@"
        case .notBeginsWith, .containsAllTokens, .containsAnyTokens, .listContains, .notListContains,
            .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll, .listMemberBeginsWith,
            .notListMemberBeginsWith:
            nil
        }
    }

    /// The comparisons a portable predicate makes, all of which must hold.
    ///
    /// - Parameters:
    ///   - listFields: The fields of the query's record type that hold lists.
    ///   - zoneID: The zone the query runs in: a record name compares as the ID of a record there.
    /// - Throws: ``CloudDatabaseError/invalidArguments(_:)`` for a comparison CloudKit can't run: a comparator it
    ///   has no operator for, a list value under a comparator that takes one value (or one value under `in`), an
    ///   asset (assets aren't queryable), an order on a value CloudKit doesn't order, a list field compared other
    ///   than by membership, a system field with a value of another type.
    static func comparisons(
        of predicate: CloudQuery.Predicate, listFields: Set<String>, zoneID: CloudRecord.ZoneID
    ) throws(CloudDatabaseError) -> [QueryComparison] {
        switch predicate {
        case .all:
            return []
        case .equals(let field, let value):
            return try comparisons(field, .equals, value, listFields: listFields, zoneID: zoneID)
        case .compare(let field, let comparator, let value):
            return try comparisons(field, comparator, value, listFields: listFields, zoneID: zoneID)
        case .references(let target, let field):
            let reference = CKRecord.Reference(recordID: target.ckRecordID, action: .none)
            let format = listFields.contains(field) ? "%K CONTAINS %@" : "%K == %@"
            return [QueryComparison(field: field, format: format, argument: reference)]
        case .near(let field, let location, let radius):
            guard radius.isFinite, radius >= 0 else {
                throw .invalidArguments("a query's radius around \(field) is a distance in metres, not \(radius)")
            }
            // CloudKit's distance function measures in kilometres.
            return [
                QueryComparison(
                    field: field, format: "distanceToLocation:fromLocation:(%K, %@) <= %@",
                    argument: CLLocation(location),
                    trailingArguments: [NSNumber(value: radius / 1000)])
            ]
        case .and(let predicates):
            var comparisons: [QueryComparison] = []
            for predicate in predicates {
                comparisons += try Self.comparisons(of: predicate, listFields: listFields, zoneID: zoneID)
            }
            return comparisons
        }
    }

    private static func comparisons(
        _ field: String, _ comparator: CloudQuery.Comparator, _ value: CloudValue, listFields: Set<String>,
        zoneID: CloudRecord.ZoneID
    ) throws(CloudDatabaseError) -> [QueryComparison] {
        if comparator.takesList != value.kind.isList {
            throw .invalidArguments(
                comparator.takesList
                    ? "\(comparator.rawValue) compares the field \(field) with a list of candidates, not one value"
                    : "a query compares the field \(field) with one value, not a list; a list field matches an element")
        }
        if let systemField = CloudQuery.SystemField(fieldName: field) {
            return [try systemComparison(systemField, comparator, value, zoneID: zoneID)]
        }
        if value.kind == .asset || value.kind == .assetList {
            throw .invalidArguments(
                "a query can't compare the field \(field) with an asset: CloudKit doesn't index assets")
        }
        if listFields.contains(field) {
            return try listComparisons(field, comparator, value)
        }
        guard let format = singleFieldFormat(comparator) else {
            throw .invalidArguments(refusal(of: comparator, on: field))
        }
        let orderable: Set<CloudValue.Kind> = [.string, .int64, .double, .date]
        if comparator.orders, !orderable.contains(value.kind) {
            throw .invalidArguments(
                "CloudKit orders strings, numbers and dates only: compare the field \(field) with equals or "
                    + "notEquals, not \(comparator.rawValue), for a \(value.kind) value")
        }
        if comparator == .beginsWith, value.kind != .string {
            throw .invalidArguments("BEGINS_WITH compares the field \(field) with a string, not a \(value.kind) value")
        }
        let argument: Any =
            comparator.takesList ? value.queryElements.compactMap(\.queryArgument) : value.queryArgument as Any
        return [QueryComparison(field: field, format: format, argument: argument)]
    }

    /// The comparisons of a list field, which CloudKit matches only by membership: `CONTAINS` for `equals` and
    /// `listContains`, one `CONTAINS` an element for `listContainsAll`.
    private static func listComparisons(
        _ field: String, _ comparator: CloudQuery.Comparator, _ value: CloudValue
    ) throws(CloudDatabaseError) -> [QueryComparison] {
        switch comparator {
        case .equals, .listContains:
            return [QueryComparison(field: field, format: "%K CONTAINS %@", argument: value.queryArgument as Any)]
        case .listContainsAll:
            return value.queryElements.map {
                QueryComparison(field: field, format: "%K CONTAINS %@", argument: $0.queryArgument as Any)
            }
        default:
            throw .invalidArguments(
                "CloudKit matches the list field \(field) only by membership (CONTAINS): compare it with "
                    + "CloudQuery.Comparator.equals, listContains or listContainsAll, or filter the results yourself")
        }
    }

    /// Why CloudKit's predicates can't say what a comparator says about a single field.
    private static func refusal(of comparator: CloudQuery.Comparator, on field: String) -> String {
        switch comparator {
        case .containsAllTokens, .containsAnyTokens:
            "CloudKit's predicates search words across all of a record's string fields (self CONTAINS), not in "
                + "the field \(field): query through Web Services, or filter the results yourself"
        case .notBeginsWith:
            "CloudKit's predicates allow NOT only around IN, so NOT_BEGINS_WITH on \(field) can't be sent: "
                + "filter the results yourself"
        default:
            "\(comparator.rawValue) applies to a list field, and \(field) isn't one: name it in "
                + "CloudKitDatabase.listFields, or compare it with equals"
        }
    }

    /// A comparison with one of a record's system fields, as CloudKit's key for it: `recordID` takes a
    /// `CKRecord.ID` in the query's zone, the users' keys `CKRecord.ID`s of user records, the dates `NSDate`s.
    private static func systemComparison(
        _ field: CloudQuery.SystemField, _ comparator: CloudQuery.Comparator, _ value: CloudValue,
        zoneID: CloudRecord.ZoneID
    ) throws(CloudDatabaseError) -> QueryComparison {
        guard let format = singleFieldFormat(comparator), comparator != .beginsWith else {
            throw .invalidArguments(
                "CloudKit compares \(field.fieldName) with equality, order or IN, not \(comparator.rawValue)")
        }
        let arguments: [Any]
        switch (field, value.kind.elementKind) {
        case (.recordName, .string), (.creatorUserRecordName, .string), (.lastModifiedUserRecordName, .string):
            let zone = field == .recordName ? zoneID : .default
            arguments = value.queryElements.map { element in
                guard case .string(let name) = element else { return NSNull() }
                return CKRecord.ID(recordName: name, zoneID: zone.ckZoneID)
            }
        case (.creationDate, .date), (.modificationDate, .date):
            arguments = value.queryElements.compactMap(\.queryArgument)
        case (.recordName, _), (.creatorUserRecordName, _), (.lastModifiedUserRecordName, _):
            throw .invalidArguments(
                "\(field.fieldName) compares with a string (a list of strings for IN), not a \(value.kind) value")
        case (.creationDate, _), (.modificationDate, _):
            throw .invalidArguments("\(field.fieldName) compares with a date, not a \(value.kind) value")
        }
        return QueryComparison(
            field: field.fieldName, format: format, argument: comparator.takesList ? arguments : arguments.first as Any)
    }
}

extension CloudValue {
    /// The value as a query's argument: a reference as a reference with no action, as CloudKit matches references
    /// by their record; `nil` for an asset.
    var queryArgument: (any CKRecordValue)? {
        if case .reference(let reference) = self {
            return CKRecord.Reference(recordID: reference.recordID.ckRecordID, action: .none)
        }
        return scalarOrListValue
    }
}
#endif
