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
        /// The field's value compares with this value as the comparator says: numbers with numbers, dates with
        /// dates, strings with strings. A field may be a ``SystemField`` (its ``SystemField/fieldName``), so a
        /// client can ask for the records modified since a date.
        case compare(field: String, Comparator, CloudValue)

        /// The records modified after a date: how a client syncs the public database and the default zone, which
        /// keep no change history.
        public static func modified(after date: Date) -> Predicate {
            .compare(field: SystemField.modificationDate.fieldName, .greaterThan, .date(date))
        }

        /// Whether a record meets the condition.
        public func matches(_ record: CloudRecord) -> Bool {
            switch self {
            case .all:
                return true
            case .equals(let field, let value):
                guard let stored = record.queryValue(field) else { return false }
                if case .reference(let wanted) = value, case .reference(let reference) = stored {
                    return reference.recordID == wanted.recordID
                }
                return stored == value || stored.listContains(value)
            case .references(let target, let field):
                switch record[field] {
                case .reference(let reference): return reference.recordID == target
                case .referenceList(let references): return references.contains { $0.recordID == target }
                default: return false
                }
            case .and(let predicates):
                return predicates.allSatisfy { $0.matches(record) }
            case .compare(let field, let comparator, let value):
                guard let stored = record.queryValue(field) else { return false }
                return comparator.holds(stored, value)
            }
        }
    }

    /// How ``Predicate/compare(field:_:_:)`` compares a field with a value (Web Services' comparators of the same
    /// names).
    public enum Comparator: String, Sendable, Hashable, Codable {
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
        /// Not equal to the value.
        case notEquals = "NOT_EQUALS"

        /// Whether `stored` and `value` compare as the comparator says; values of types that don't compare
        /// (a string with a number) never match.
        func holds(_ stored: CloudValue, _ value: CloudValue) -> Bool {
            switch self {
            case .equals: return stored == value || stored.listContains(value)
            case .notEquals: return stored != value && !stored.listContains(value)
            case .lessThan: return stored.sortsBefore(value) == true
            case .greaterThan: return value.sortsBefore(stored) == true
            case .lessThanOrEquals: return stored == value || stored.sortsBefore(value) == true
            case .greaterThanOrEquals: return stored == value || value.sortsBefore(stored) == true
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

        /// The name a predicate or sort descriptor uses for the field. Each is one of `CKRecord`'s reserved names, so
        /// no record field can take it: `recordID` for the record name (compared as a string), `creationDate`,
        /// `modificationDate`.
        public var fieldName: String {
            switch self {
            case .recordName: "recordID"
            case .creationDate: "creationDate"
            case .modificationDate: "modificationDate"
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

    /// Whether `lhs` comes before `rhs` in this query's order; ties and an empty order fall back to record name.
    public func sortsBefore(_ lhs: CloudRecord, _ rhs: CloudRecord) -> Bool {
        for descriptor in sortDescriptors {
            switch (lhs.queryValue(descriptor.field), rhs.queryValue(descriptor.field)) {
            case (nil, nil): continue
            case (nil, _): return false
            case (_, nil): return true
            case (let left?, let right?):
                if left == right { continue }
                if let ordered = left.sortsBefore(right) { return descriptor.ascending ? ordered : !ordered }
            }
        }
        return lhs.id.recordName < rhs.id.recordName
    }
}

extension CloudValue {
    /// Whether this is a list holding `element` (a single value of the list's element type).
    func listContains(_ element: CloudValue) -> Bool {
        switch (self, element) {
        case (.stringList(let list), .string(let value)): list.contains(value)
        case (.int64List(let list), .int64(let value)): list.contains(value)
        case (.doubleList(let list), .double(let value)): list.contains(value)
        case (.dateList(let list), .date(let value)): list.contains(value)
        case (.referenceList(let list), .reference(let value)): list.contains { $0.recordID == value.recordID }
        default: false
        }
    }

    /// The order of two scalar values of one type, or `nil` when they can't be compared.
    func sortsBefore(_ other: CloudValue) -> Bool? {
        switch (self, other) {
        case (.string(let lhs), .string(let rhs)): lhs < rhs
        case (.int64(let lhs), .int64(let rhs)): lhs < rhs
        case (.double(let lhs), .double(let rhs)): lhs < rhs
        case (.date(let lhs), .date(let rhs)): lhs < rhs
        case (.int64(let lhs), .double(let rhs)): Double(lhs) < rhs
        case (.double(let lhs), .int64(let rhs)): lhs < Double(rhs)
        default: nil
        }
    }
}

extension CloudRecord {
    /// The value a query sees for a field name: a field, or a ``CloudQuery/SystemField``.
    func queryValue(_ field: String) -> CloudValue? {
        switch CloudQuery.SystemField(fieldName: field) {
        case .recordName?: .string(id.recordName)
        case .creationDate?: systemFields?.creationDate.map(CloudValue.date)
        case .modificationDate?: systemFields?.modificationDate.map(CloudValue.date)
        case nil: self[field]
        }
    }
}
