#if canImport(CloudKit)
import CloudKit
import Foundation

/// One comparison of a CloudKit query, before it becomes an `NSPredicate`: a field, an operator CloudKit runs,
/// and a value of a class `CKQuery` accepts as an argument.
///
/// A query's predicate is a list of these, all of which must hold: `CKQuery` accepts only `AND` compounds, so a
/// condition that needs `OR` (a field that is either a reference or a reference list holding one) can't be sent;
/// the caller says which fields are lists (``CloudKitDatabase/listFields``).
struct QueryComparison {
    /// An operator of CloudKit's predicate rules (`CKQuery`'s supported operators: the basic comparisons and
    /// `CONTAINS`).
    enum Operator: String {
        /// A single field equals the value; for a reference, it points to the value's record, whatever the action.
        case equals = "=="
        /// A single field differs from the value.
        case notEquals = "!="
        /// A single field is smaller than the value.
        case lessThan = "<"
        /// A single field is smaller than or equal to the value.
        case lessThanOrEquals = "<="
        /// A single field is greater than the value.
        case greaterThan = ">"
        /// A single field is greater than or equal to the value.
        case greaterThanOrEquals = ">="
        /// A list field holds the value as an element.
        case contains = "CONTAINS"

        init(_ comparator: CloudQuery.Comparator) {
            switch comparator {
            case .equals: self = .equals
            case .notEquals: self = .notEquals
            case .lessThan: self = .lessThan
            case .lessThanOrEquals: self = .lessThanOrEquals
            case .greaterThan: self = .greaterThan
            case .greaterThanOrEquals: self = .greaterThanOrEquals
            }
        }

        /// Whether the operator orders values, which CloudKit does for strings, numbers and dates only.
        var orders: Bool {
            switch self {
            case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals: true
            case .equals, .notEquals, .contains: false
            }
        }
    }

    /// The field compared: a record field, or one of CloudKit's keys for a system field (`recordID`,
    /// `creationDate`, `modificationDate`).
    let field: String
    /// How it is compared.
    let comparison: Operator
    /// The value compared with: a `CKRecordValue`, or a `CKRecord.ID` for `recordID`.
    let argument: Any

    /// The predicate's format string, with the field and the value as its arguments.
    var format: String { "%K \(comparison.rawValue) %@" }

    /// The comparisons a portable predicate makes, all of which must hold.
    ///
    /// - Parameters:
    ///   - listFields: The fields of the query's record type that hold lists.
    ///   - zoneID: The zone the query runs in: a record name compares as the ID of a record there.
    /// - Throws: ``CloudDatabaseError/invalidArguments(_:)`` for a comparison CloudKit can't run: with a list
    ///   value (a comparison takes one value) or an asset (assets aren't queryable), an order on a value CloudKit
    ///   doesn't order, a list field compared other than by membership, a system field with a value of another type.
    static func comparisons(
        of predicate: CloudQuery.Predicate, listFields: Set<String>, zoneID: CloudRecord.ZoneID
    ) throws(CloudDatabaseError) -> [QueryComparison] {
        switch predicate {
        case .all:
            return []
        case .equals(let field, let value):
            return [try comparison(field, .equals, value, listFields: listFields, zoneID: zoneID)]
        case .compare(let field, let comparator, let value):
            return [try comparison(field, comparator, value, listFields: listFields, zoneID: zoneID)]
        case .references(let target, let field):
            let reference = CKRecord.Reference(recordID: target.ckRecordID, action: .none)
            return [
                QueryComparison(
                    field: field, comparison: listFields.contains(field) ? .contains : .equals, argument: reference)
            ]
        case .and(let predicates):
            var comparisons: [QueryComparison] = []
            for predicate in predicates {
                comparisons += try Self.comparisons(of: predicate, listFields: listFields, zoneID: zoneID)
            }
            return comparisons
        }
    }

    private static func comparison(
        _ field: String, _ comparator: CloudQuery.Comparator, _ value: CloudValue, listFields: Set<String>,
        zoneID: CloudRecord.ZoneID
    ) throws(CloudDatabaseError) -> QueryComparison {
        let operation = Operator(comparator)
        if let systemField = CloudQuery.SystemField(fieldName: field) {
            return try systemComparison(systemField, operation, value, zoneID: zoneID)
        }
        if value.kind.isList {
            throw .invalidArguments(
                "a query compares the field \(field) with one value, not a list; a list field matches an element")
        }
        guard let argument = value.queryArgument else {
            throw .invalidArguments(
                "a query can't compare the field \(field) with an asset: CloudKit doesn't index assets")
        }
        if listFields.contains(field) {
            guard operation == .equals else {
                throw .invalidArguments(
                    "CloudKit matches the list field \(field) only by membership (CONTAINS): compare it with "
                        + "CloudQuery.Comparator.equals, or filter the results yourself")
            }
            return QueryComparison(field: field, comparison: .contains, argument: argument)
        }
        if operation.orders {
            switch value.kind {
            case .string, .int64, .double, .date:
                break
            default:
                throw .invalidArguments(
                    "CloudKit orders strings, numbers and dates only: compare the field \(field) with equals or "
                        + "notEquals, not \(operation.rawValue), for a \(value.kind) value")
            }
        }
        return QueryComparison(field: field, comparison: operation, argument: argument)
    }

    /// A comparison with one of a record's system fields, as CloudKit's key for it: `recordID` takes a
    /// `CKRecord.ID` (in the query's zone), the dates take `NSDate`s.
    private static func systemComparison(
        _ field: CloudQuery.SystemField, _ operation: Operator, _ value: CloudValue, zoneID: CloudRecord.ZoneID
    ) throws(CloudDatabaseError) -> QueryComparison {
        switch (field, value) {
        case (.recordName, .string(let name)):
            let id = CKRecord.ID(recordName: name, zoneID: zoneID.ckZoneID)
            return QueryComparison(field: field.fieldName, comparison: operation, argument: id)
        case (.creationDate, .date(let date)), (.modificationDate, .date(let date)):
            let argument = NSDate(timeIntervalSince1970: date.timeIntervalSince1970)
            return QueryComparison(field: field.fieldName, comparison: operation, argument: argument)
        case (.recordName, _):
            throw .invalidArguments(
                "the record name (\(field.fieldName)) compares with a string, not a \(value.kind) value")
        case (.creationDate, _), (.modificationDate, _):
            throw .invalidArguments("\(field.fieldName) compares with a date, not a \(value.kind) value")
        }
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
