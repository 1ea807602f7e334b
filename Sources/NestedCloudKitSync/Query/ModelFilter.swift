import Foundation
import NestedCloudKitCodable

/// Which models a query keeps: comparisons of fields with values, combined with `&&`, `||` and `!`.
///
/// ```swift
/// let filter: ModelFilter<Note> = .equals(.isDone, false) && (.beginsWith(.title, "Buy") || .isNil(.due))
/// ```
///
/// Values are given as the model holds them (a `Bool`, a `Date`, an enum with a raw value, a model for a
/// reference) and stored as the encoder stores them. Comparisons follow SQLite's, on the values a record's fields
/// hold: numbers (and dates, as seconds since 1970) compare as numbers, strings by their UTF-8 bytes, a reference
/// by the record name it points to. A record without the field, or whose field is `nil`, matches no comparison,
/// negated or not: only `isNil` matches it. Bytes, assets and locations can only be tested for `nil`.
public struct ModelFilter<Model: QueryableModel>: Sendable, Hashable {
    indirect enum Node: Sendable, Hashable {
        case compare(QueryField<Model>.Target, Comparison, CloudValue)
        case isIn(QueryField<Model>.Target, [CloudValue], negated: Bool)
        case beginsWith(QueryField<Model>.Target, String)
        case listContains(QueryField<Model>.Target, CloudValue)
        case references(QueryField<Model>.Target, CloudRecord.ID)
        case isNil(QueryField<Model>.Target, Bool)
        case and([Node])
        case or([Node])
        case not(Node)
        /// A value that couldn't be encoded: the query throws when it runs.
        case invalid(String)
    }

    enum Comparison: String, Sendable, Hashable {
        case equals = "="
        case notEquals = "<>"
        case lessThan = "<"
        case lessThanOrEquals = "<="
        case greaterThan = ">"
        case greaterThanOrEquals = ">="
    }

    let node: Node

    // MARK: Comparisons

    /// The field equals the value.
    public static func equals(_ field: QueryField<Model>, _ value: some Encodable) -> Self {
        compare(field, .equals, value)
    }
    /// The field is set and differs from the value.
    public static func notEquals(_ field: QueryField<Model>, _ value: some Encodable) -> Self {
        compare(field, .notEquals, value)
    }
    /// The field is less than the value.
    public static func lessThan(_ field: QueryField<Model>, _ value: some Encodable) -> Self {
        compare(field, .lessThan, value)
    }
    /// The field is less than or equal to the value.
    public static func lessThanOrEquals(_ field: QueryField<Model>, _ value: some Encodable) -> Self {
        compare(field, .lessThanOrEquals, value)
    }
    /// The field is greater than the value.
    public static func greaterThan(_ field: QueryField<Model>, _ value: some Encodable) -> Self {
        compare(field, .greaterThan, value)
    }
    /// The field is greater than or equal to the value.
    public static func greaterThanOrEquals(_ field: QueryField<Model>, _ value: some Encodable) -> Self {
        compare(field, .greaterThanOrEquals, value)
    }
    /// The field equals one of the values.
    public static func isIn(_ field: QueryField<Model>, _ values: [some Encodable]) -> Self {
        list(field, values, negated: false)
    }
    /// The field is set and equals none of the values.
    public static func notIn(_ field: QueryField<Model>, _ values: [some Encodable]) -> Self {
        list(field, values, negated: true)
    }
    /// The string field begins with the prefix (case-sensitive, as CloudKit's `BEGINS_WITH`).
    public static func beginsWith(_ field: QueryField<Model>, _ prefix: String) -> Self {
        Self(node: .beginsWith(field.target, prefix))
    }
    /// The list field holds the element.
    public static func contains(_ field: QueryField<Model>, _ element: some Encodable) -> Self {
        switch QueryValue.cloudValue(of: element, for: field) {
        case .value(let value): Self(node: .listContains(field.target, value))
        case .invalid(let reason): Self(node: .invalid(reason))
        }
    }
    /// The reference field (or reference list) points to the record.
    public static func references(_ field: QueryField<Model>, _ recordID: CloudRecord.ID) -> Self {
        Self(node: .references(field.target, recordID))
    }
    /// The reference field (or reference list) points to the model's record, in the query's zone.
    public static func references(_ field: QueryField<Model>, recordName: String) -> Self {
        Self(node: .references(field.target, CloudRecord.ID(recordName: recordName, zoneID: QueryZone.placeholder)))
    }
    /// The field is `nil` or the record doesn't have it.
    public static func isNil(_ field: QueryField<Model>) -> Self { Self(node: .isNil(field.target, true)) }
    /// The field holds a value.
    public static func isNotNil(_ field: QueryField<Model>) -> Self { Self(node: .isNil(field.target, false)) }

    // MARK: The same, by coding key

    /// The field equals the value.
    public static func equals(_ key: Model.CodingKeys, _ value: some Encodable) -> Self { equals(.key(key), value) }
    /// The field is set and differs from the value.
    public static func notEquals(_ key: Model.CodingKeys, _ value: some Encodable) -> Self {
        notEquals(.key(key), value)
    }
    /// The field is less than the value.
    public static func lessThan(_ key: Model.CodingKeys, _ value: some Encodable) -> Self {
        lessThan(.key(key), value)
    }
    /// The field is less than or equal to the value.
    public static func lessThanOrEquals(_ key: Model.CodingKeys, _ value: some Encodable) -> Self {
        lessThanOrEquals(.key(key), value)
    }
    /// The field is greater than the value.
    public static func greaterThan(_ key: Model.CodingKeys, _ value: some Encodable) -> Self {
        greaterThan(.key(key), value)
    }
    /// The field is greater than or equal to the value.
    public static func greaterThanOrEquals(_ key: Model.CodingKeys, _ value: some Encodable) -> Self {
        greaterThanOrEquals(.key(key), value)
    }
    /// The field equals one of the values.
    public static func isIn(_ key: Model.CodingKeys, _ values: [some Encodable]) -> Self { isIn(.key(key), values) }
    /// The field is set and equals none of the values.
    public static func notIn(_ key: Model.CodingKeys, _ values: [some Encodable]) -> Self {
        notIn(.key(key), values)
    }
    /// The string field begins with the prefix.
    public static func beginsWith(_ key: Model.CodingKeys, _ prefix: String) -> Self {
        beginsWith(.key(key), prefix)
    }
    /// The list field holds the element.
    public static func contains(_ key: Model.CodingKeys, _ element: some Encodable) -> Self {
        contains(.key(key), element)
    }
    /// The reference field (or reference list) points to the record.
    public static func references(_ key: Model.CodingKeys, _ recordID: CloudRecord.ID) -> Self {
        references(.key(key), recordID)
    }
    /// The reference field (or reference list) points to the record with this name, in the query's zone.
    public static func references(_ key: Model.CodingKeys, recordName: String) -> Self {
        references(.key(key), recordName: recordName)
    }
    /// The field is `nil` or the record doesn't have it.
    public static func isNil(_ key: Model.CodingKeys) -> Self { isNil(.key(key)) }
    /// The field holds a value.
    public static func isNotNil(_ key: Model.CodingKeys) -> Self { isNotNil(.key(key)) }

    // MARK: Combining

    /// Both filters match.
    public static func && (lhs: Self, rhs: Self) -> Self { Self(node: .and([lhs.node, rhs.node])) }
    /// Either filter matches.
    public static func || (lhs: Self, rhs: Self) -> Self { Self(node: .or([lhs.node, rhs.node])) }
    /// The filter doesn't match (a record without the field matches neither a comparison nor its negation).
    public static prefix func ! (filter: Self) -> Self { Self(node: .not(filter.node)) }
    /// Every filter matches; no filters match every model.
    public static func all(_ filters: [Self]) -> Self { Self(node: .and(filters.map(\.node))) }
    /// Any filter matches; no filters match none.
    public static func any(_ filters: [Self]) -> Self { Self(node: .or(filters.map(\.node))) }

    private static func compare(_ field: QueryField<Model>, _ comparison: Comparison, _ value: some Encodable)
        -> Self
    {
        switch QueryValue.cloudValue(of: value, for: field) {
        case .value(let value): Self(node: .compare(field.target, comparison, value))
        case .invalid(let reason): Self(node: .invalid(reason))
        }
    }

    private static func list(_ field: QueryField<Model>, _ values: [some Encodable], negated: Bool) -> Self {
        var converted: [CloudValue] = []
        for value in values {
            switch QueryValue.cloudValue(of: value, for: field) {
            case .value(let value): converted.append(value)
            case .invalid(let reason): return Self(node: .invalid(reason))
            }
        }
        return Self(node: .isIn(field.target, converted, negated: negated))
    }
}

/// The zone of a reference given by record name only: the query's, filled in when it runs.
enum QueryZone {
    static let placeholder = CloudRecord.ZoneID(zoneName: "\u{0}query-zone", ownerName: "\u{0}query-zone")
}

/// Values of queries, stored as the encoder stores a property's value.
enum QueryValue {
    private struct Box<Value: Encodable>: CKEncodable {
        let value: Value
        var cloudKitRecordType: String { "QueryValue" }
        var cloudKitIdentifier: String { "value" }
    }

    enum Converted {
        case value(CloudValue)
        /// Why not, for the error the query throws when it runs.
        case invalid(String)
    }

    static func cloudValue<Model>(of value: some Encodable, for field: QueryField<Model>) -> Converted {
        do {
            let records = try CKRecordEncoder().encodeRecords(Box(value: value))
            guard let stored = records.last?.fields["value"] else {
                return .invalid("the value for \(field.name) of \(Model.self) is nil: use isNil(_:) or isNotNil(_:)")
            }
            return .value(stored)
        } catch {
            return .invalid("the value for \(field.name) of \(Model.self) can't be stored: \(error)")
        }
    }
}
