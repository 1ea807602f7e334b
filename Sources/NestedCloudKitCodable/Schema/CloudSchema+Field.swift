import Foundation

extension CloudSchema {
    /// A field of a record type: its type and its indexes.
    public struct Field: Sendable, Hashable, CustomStringConvertible {
        /// The field's type.
        public var type: FieldType
        /// The indexes CloudKit keeps on it.
        public var indexes: Indexes

        /// A field of a type, with indexes.
        public init(_ type: FieldType, indexes: Indexes = []) {
            self.type = type
            self.indexes = indexes
        }

        /// The field's type and indexes as the schema language writes them: `STRING QUERYABLE SEARCHABLE`.
        public var description: String {
            indexes.isEmpty ? type.description : "\(type) \(indexes)"
        }
    }
}
