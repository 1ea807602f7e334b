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
    /// An operator of CloudKit's predicate rules.
    enum Operator: String {
        /// A single field equals the value; for a reference, it points to the value's record, whatever the action.
        case equals = "=="
        /// A list field holds the value as an element.
        case contains = "CONTAINS"
    }

    /// The field compared.
    let field: String
    /// How it is compared.
    let comparison: Operator
    /// The value compared with.
    let argument: any CKRecordValue

    /// The predicate's format string, with the field and the value as its arguments.
    var format: String { "%K \(comparison.rawValue) %@" }

    /// The comparisons a portable predicate makes, all of which must hold.
    ///
    /// - Parameter listFields: The fields of the query's record type that hold lists.
    /// - Throws: ``CloudDatabaseError/invalidArguments(_:)`` for a comparison CloudKit can't run: with a list
    ///   value (a comparison takes one value) or an asset (assets aren't queryable).
    static func comparisons(of predicate: CloudQuery.Predicate, listFields: Set<String>) throws(CloudDatabaseError)
        -> [QueryComparison]
    {
        switch predicate {
        case .all:
            return []
        case .equals(let field, let value):
            if value.kind.isList {
                throw .invalidArguments(
                    "a query compares the field \(field) with one value, not a list; a list field matches an element")
            }
            guard let argument = value.queryArgument else {
                throw .invalidArguments(
                    "a query can't compare the field \(field) with an asset: CloudKit doesn't index assets")
            }
            return [
                QueryComparison(
                    field: field, comparison: listFields.contains(field) ? .contains : .equals, argument: argument)
            ]
        case .references(let target, let field):
            let reference = CKRecord.Reference(recordID: target.ckRecordID, action: .none)
            return [
                QueryComparison(
                    field: field, comparison: listFields.contains(field) ? .contains : .equals, argument: reference)
            ]
        case .and(let predicates):
            var comparisons: [QueryComparison] = []
            for predicate in predicates { comparisons += try Self.comparisons(of: predicate, listFields: listFields) }
            return comparisons
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
