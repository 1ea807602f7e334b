import Foundation

extension CloudSchema {
    /// An index a query needs on a field: CloudKit's production environment refuses the query without it, with
    /// "Field '...' is not marked queryable" (or sortable, or searchable).
    public struct IndexNeed: Sendable, Hashable, CustomStringConvertible {
        /// The record type the query reads.
        public var recordType: String
        /// The field, by its name in the schema language (`___modTime` for ``CloudQuery/SystemField/modificationDate``).
        public var field: String
        /// The indexes a schema made for the query gives the field.
        public var indexes: Indexes
        /// The indexes of which any one serves the query: a comparison that orders is served by a sortable or a
        /// queryable field.
        public var servedBy: Indexes
        /// What in the query needs it: `EQUALS`, `sort`, `a query without a filter`...
        public var use: String

        /// The need in words: `Note.title QUERYABLE (for BEGINS_WITH)`.
        public var description: String { "\(recordType).\(field) \(indexes) (for \(use))" }
    }

    /// The indexes a query needs: one per field it filters or sorts on, and `___recordID` QUERYABLE for a query
    /// without a filter, which CloudKit answers by going over the record type by record name.
    public static func indexNeeds(of query: CloudQuery) -> [IndexNeed] {
        var needs: [IndexNeed] = []
        func need(_ field: String, _ indexes: Indexes, servedBy: Indexes? = nil, for use: String) {
            let name = CloudQuery.SystemField(fieldName: field).map(RecordType.systemFieldName) ?? field
            needs.append(
                IndexNeed(
                    recordType: query.recordType, field: name, indexes: indexes, servedBy: servedBy ?? indexes,
                    use: use))
        }
        func visit(_ predicate: CloudQuery.Predicate) {
            switch predicate {
            case .all: break
            case .equals(let field, _): need(field, .queryable, for: CloudQuery.Comparator.equals.rawValue)
            case .references(_, let field): need(field, .queryable, for: "a reference")
            case .and(let predicates): predicates.forEach(visit)
            case .compare(let field, let comparator, _):
                if comparator.orders {
                    need(field, [.queryable, .sortable], servedBy: [.queryable, .sortable], for: comparator.rawValue)
                } else if comparator == .containsAllTokens || comparator == .containsAnyTokens {
                    need(field, .searchable, for: comparator.rawValue)
                } else {
                    need(field, .queryable, for: comparator.rawValue)
                }
            case .near(let field, _, _): need(field, .queryable, for: "NEAR")
            }
        }
        visit(query.predicate)
        if needs.isEmpty {
            need(CloudQuery.SystemField.recordName.fieldName, .queryable, for: "a query without a filter")
        }
        for sort in query.sortDescriptors { need(sort.field, .sortable, for: "a sort") }
        return needs
    }

    /// Adds the indexes a query needs to the fields it names.
    ///
    /// - Throws: ``CloudSchemaError/Code/unknownField`` for a record type or field the schema
    ///   doesn't have (most likely a misspelling), ``CloudSchemaError/Code/invalidDeclaration`` for an index the
    ///   field's type can't have: CloudKit can't run such a query.
    public mutating func addIndexes(for query: CloudQuery) throws(CloudSchemaError) {
        for need in Self.indexNeeds(of: query) {
            guard var type = recordTypes[need.recordType] else {
                throw .unknownField(recordType: need.recordType, field: need.field, known: [])
            }
            guard var field = type.fields[need.field] else {
                throw .unknownField(
                    recordType: need.recordType, field: need.field, known: Array(type.userFields.keys))
            }
            field.indexes.formUnion(need.indexes.intersection(field.type.allowedIndexes))
            guard field.indexes.contains(need.indexes) || !field.indexes.isDisjoint(with: need.servedBy) else {
                throw .invalid(
                    "a query needs \(need.recordType).\(need.field) \(need.indexes) for \(need.use), and a field "
                        + "of type \(field.type) can't have it", recordType: need.recordType, field: need.field,
                    fix: field.type.isEncrypted
                        ? "CloudKit doesn't index encrypted fields: query another field, or don't encrypt this one"
                        : need.indexes.contains(.searchable)
                            ? "Full text search is for strings: compare this field with EQUALS or an order instead"
                            : "A list has no order: sort on another field")
            }
            type.fields[need.field] = field
            recordTypes[need.recordType] = type
        }
    }

    /// The indexes a query needs that the schema lacks: what production refuses the query for.
    public func missingIndexes(for query: CloudQuery) -> [IndexNeed] {
        Self.indexNeeds(of: query).filter { need in
            guard let field = recordTypes[need.recordType]?.fields[need.field] else { return true }
            return field.indexes.isDisjoint(with: need.servedBy)
        }
    }
}
