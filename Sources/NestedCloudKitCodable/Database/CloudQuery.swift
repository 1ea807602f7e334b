import Foundation

/// A search for records of one type, with a predicate and a sort order; the portable counterpart of `CKQuery`.
///
/// ```swift
/// let query = CloudQuery(recordType: "Person", predicate: .references(schoolID, in: "school"))
/// ```
public struct CloudQuery: Sendable, Hashable {
    /// A `resultsLimit` that asks for as many results per page as the database allows, as
    /// `CKQueryOperation.maximumResults` does.
    public static let maximumResults = 0

    /// The type of the records to find.
    public var recordType: String
    /// The condition a record must meet.
    public var predicate: Predicate
    /// The order of the results; by record name when empty, so that pages are stable.
    public var sortDescriptors: [SortDescriptor]

    /// Creates a query.
    public init(recordType: String, predicate: Predicate = .all, sortDescriptors: [SortDescriptor] = []) {
        self.recordType = recordType
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }

    /// A condition on a record's fields.
    public indirect enum Predicate: Sendable, Hashable {
        /// Every record of the type.
        case all
        /// The field holds this value (a list field matches when it holds the value as an element). References
        /// match by the record they point to, whatever their action, as in CloudKit.
        case equals(field: String, value: CloudValue)
        /// The field (a reference or a reference list) points to the record with this ID.
        case references(CloudRecord.ID, in: String)
        /// Every one of the predicates holds.
        case and([Predicate])
        /// The field's value compares with this value as the comparator says: numbers with numbers (an integer with
        /// a double too), dates with dates, strings with strings, references by the record they point to. A field
        /// may be a ``SystemField`` (its ``SystemField/fieldName``), so a client can ask for the records modified
        /// since a date.
        case compare(field: String, Comparator, CloudValue)
        /// The field holds a location within `radius` metres of `location` (Web Services' `NEAR`), measured along
        /// the Earth's surface.
        case near(field: String, location: CloudLocation, radius: Double)

        /// The records modified after a date: how a client syncs the public database and the default zone, which
        /// keep no change history.
        public static func modified(after date: Date) -> Predicate {
            .compare(field: SystemField.modificationDate.fieldName, .greaterThan, .date(date))
        }

        /// Whether a record meets the condition.
        ///
        /// Every database that evaluates queries itself (in memory, SQLite, the sync store, the emulator) asks this,
        /// so a condition means the same on each of them.
        package func matches(_ record: CloudRecord) -> Bool {
            switch self {
            case .all:
                return true
            case .equals(let field, let value):
                return Comparator.equals.holds(record.queryValue(field), value)
            case .references(let target, let field):
                return (record[field]?.queryElements ?? []).contains {
                    if case .reference(let reference) = $0 { reference.recordID == target } else { false }
                }
            case .and(let predicates):
                return predicates.allSatisfy { $0.matches(record) }
            case .compare(let field, let comparator, let value):
                return comparator.holds(record.queryValue(field), value)
            case .near(let field, let location, let radius):
                guard case .location(let here)? = record.queryValue(field) else { return false }
                return here.metres(to: location) <= radius
            }
        }
    }

    /// How ``Predicate/compare(field:_:_:)`` compares a field with a value: Web Services' comparators, under the
    /// same names.
    ///
    /// Each `not` comparator holds exactly when its affirmative form doesn't, so a record that lacks the field
    /// matches `notEquals`, `notIn` and the other negations. Values of types that don't compare (a string with a
    /// number) never match an affirmative comparator.
    public enum Comparator: String, Sendable, Hashable, Codable, CaseIterable {
        /// Smaller than the value.
        case lessThan = "LESS_THAN"
        /// Smaller than or equal to the value.
        case lessThanOrEquals = "LESS_THAN_OR_EQUALS"
        /// Greater than the value.
        case greaterThan = "GREATER_THAN"
        /// Greater than or equal to the value.
        case greaterThanOrEquals = "GREATER_THAN_OR_EQUALS"
        /// Equal to the value (a list field: holding it).
        case equals = "EQUALS"
        /// Not equal to the value (a list field: not holding it).
        case notEquals = "NOT_EQUALS"
        /// Equal to one of the elements of the value, a list.
        case `in` = "IN"
        /// Equal to none of the elements of the value, a list.
        case notIn = "NOT_IN"
        /// A string that begins with the value, a string; the comparison is case-sensitive.
        case beginsWith = "BEGINS_WITH"
        /// Not a string that begins with the value.
        case notBeginsWith = "NOT_BEGINS_WITH"
        /// A string (or string list) whose words include every word of the value, a string. Words are the runs of
        /// letters and digits, compared without case.
        case containsAllTokens = "CONTAINS_ALL_TOKENS"
        /// A string (or string list) whose words include one of the words of the value, a string.
        case containsAnyTokens = "CONTAINS_ANY_TOKENS"
        /// A list holding the value, one element.
        case listContains = "LIST_CONTAINS"
        /// A list not holding the value.
        case notListContains = "NOT_LIST_CONTAINS"
        /// A list holding one of the elements of the value, a list.
        case listContainsAny = "LIST_CONTAINS_ANY"
        /// A list holding none of the elements of the value.
        case notListContainsAny = "NOT_LIST_CONTAINS_ANY"
        /// A list holding every element of the value, a list.
        case listContainsAll = "LIST_CONTAINS_ALL"
        /// A list missing one of the elements of the value.
        case notListContainsAll = "NOT_LIST_CONTAINS_ALL"
        /// A string list with a member that begins with the value, a string.
        case listMemberBeginsWith = "LIST_MEMBER_BEGINS_WITH"
        /// A string list with no member that begins with the value.
        case notListMemberBeginsWith = "NOT_LIST_MEMBER_BEGINS_WITH"

        /// Whether the comparator's value is a list of candidates (`in`, `listContainsAny`, `listContainsAll` and
        /// their negations) rather than one value.
        package var takesList: Bool {
            switch self {
            case .in, .notIn, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll: true
            default: false
            }
        }

        /// Whether the comparator orders values rather than matching them, which needs a sortable field.
        package var orders: Bool {
            switch self {
            case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals: true
            default: false
            }
        }
    }

    /// A record's system fields, as queries filter and sort on them.
    public enum SystemField: String, Sendable, Hashable, CaseIterable {
        /// The record's name, compared as a string.
        case recordName
        /// When the record was first saved.
        case creationDate
        /// When the record was last saved.
        case modificationDate
        /// The record name of the user who created the record, compared as a string.
        case creatorUserRecordName
        /// The record name of the user who last saved the record, compared as a string.
        case lastModifiedUserRecordName

        /// The name a predicate or sort descriptor uses for the field. Each is one of `CKRecord`'s reserved names, so
        /// no record field can take it: `recordID` for the record name (compared as a string), `creationDate`,
        /// `modificationDate`, and `creatorUserRecordID` and `lastModifiedUserRecordID` for the users' record
        /// names (compared as strings).
        public var fieldName: String {
            switch self {
            case .recordName: "recordID"
            case .creationDate: "creationDate"
            case .modificationDate: "modificationDate"
            case .creatorUserRecordName: "creatorUserRecordID"
            case .lastModifiedUserRecordName: "lastModifiedUserRecordID"
            }
        }

        /// The system field a predicate's or sort descriptor's field name stands for, if any.
        public init?(fieldName: String) {
            guard let field = Self.allCases.first(where: { $0.fieldName == fieldName }) else { return nil }
            self = field
        }
    }

    /// An order on one field.
    public struct SortDescriptor: Sendable, Hashable {
        /// The field to sort by; records without it come last.
        public var field: String
        /// Whether smaller values come first.
        public var ascending: Bool

        /// Creates a sort descriptor.
        public init(field: String, ascending: Bool = true) {
            self.field = field
            self.ascending = ascending
        }

        /// Creates a sort descriptor on a system field: `SortDescriptor(.modificationDate)`.
        public init(_ systemField: SystemField, ascending: Bool = true) {
            self.init(field: systemField.fieldName, ascending: ascending)
        }
    }

    /// Where a query's results continue, returned with a page that has more after it.
    ///
    /// A cursor is only meaningful to the database that made it.
    public struct Cursor: Sendable, Hashable {
        /// The query whose results continue.
        public let query: CloudQuery
        /// The zone searched.
        public let zoneID: CloudRecord.ZoneID
        /// The backend's position in the results.
        public let position: String

        /// Creates a cursor; databases make cursors, callers only pass them back.
        public init(query: CloudQuery, zoneID: CloudRecord.ZoneID, position: String) {
            self.query = query
            self.zoneID = zoneID
            self.position = position
        }
    }
}
