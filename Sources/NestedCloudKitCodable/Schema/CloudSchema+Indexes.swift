import Foundation

extension CloudSchema {
    /// The indexes of a field: what queries may filter and sort on.
    public struct Indexes: OptionSet, Sendable, Hashable, CustomStringConvertible {
        /// The options as bits: queryable 1, searchable 2, sortable 4.
        public let rawValue: Int

        /// Indexes from their bits.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Equality: `equals`, `in`, `beginsWith`, the list comparators, references.
        public static let queryable = Indexes(rawValue: 1)
        /// Full text: `containsAllTokens`, `containsAnyTokens`; strings only.
        public static let searchable = Indexes(rawValue: 2)
        /// Order: sort descriptors and the comparisons `<`, `<=`, `>`, `>=`.
        public static let sortable = Indexes(rawValue: 4)

        /// The options in the order the schema language writes them.
        static let ordered: [(Indexes, String)] = [
            (.queryable, "QUERYABLE"), (.searchable, "SEARCHABLE"), (.sortable, "SORTABLE"),
        ]

        /// The options as the schema language writes them: `QUERYABLE SORTABLE`.
        public var description: String {
            Self.ordered.filter { contains($0.0) }.map(\.1).joined(separator: " ")
        }
    }
}
