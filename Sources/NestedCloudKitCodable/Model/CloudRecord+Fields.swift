import Foundation

extension CloudRecord {
    /// A record's fields: names mapped to values, kept in the order they were set.
    ///
    /// Iterating gives `(name, value)` pairs in that order, so output built from a record is deterministic.
    /// Two `Fields` are equal when they hold the same names with the same values, in any order, as two
    /// `CKRecord`s with the same keys and values are.
    public struct Fields: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
        /// A field: its name and value.
        public typealias Element = (name: String, value: CloudValue)

        private var entries: [Element]
        private var positions: [String: Int]

        /// Creates an empty set of fields.
        public init() {
            entries = []
            positions = [:]
        }

        /// Creates fields from name and value pairs, in order; a repeated name keeps its first position and its
        /// last value.
        public init<S: Sequence>(_ fields: S) where S.Element == (String, CloudValue) {
            self.init()
            for (name, value) in fields { self[name] = value }
        }

        /// Creates fields from a dictionary literal, keeping the literal's order.
        public init(dictionaryLiteral elements: (String, CloudValue)...) {
            self.init(elements)
        }

        /// The field names, in order.
        public var names: [String] { entries.map(\.name) }

        /// The value of the named field, or `nil`; setting `nil` removes the field.
        public subscript(name: String) -> CloudValue? {
            get { positions[name].map { entries[$0].value } }
            set {
                if let newValue {
                    if let position = positions[name] {
                        entries[position].value = newValue
                    } else {
                        positions[name] = entries.count
                        entries.append((name, newValue))
                    }
                } else if let position = positions.removeValue(forKey: name) {
                    entries.remove(at: position)
                    for later in position..<entries.count { positions[entries[later].name] = later }
                }
            }
        }

        /// Adds a field whose name isn't taken yet, with one dictionary lookup; returns `false`, changing nothing,
        /// if the name is taken.
        mutating func insertNew(_ value: CloudValue, named name: String) -> Bool {
            if let taken = positions.updateValue(entries.count, forKey: name) {
                positions[name] = taken
                return false
            }
            entries.append((name, value))
            return true
        }

        /// Reserves room for the given number of fields.
        public mutating func reserveCapacity(_ count: Int) {
            entries.reserveCapacity(count)
            positions.reserveCapacity(count)
        }

        /// The position of the first field.
        public var startIndex: Int { entries.startIndex }
        /// The position after the last field.
        public var endIndex: Int { entries.endIndex }
        /// The field at a position, in the order fields were set.
        public subscript(position: Int) -> Element { entries[position] }

        /// Whether both hold the same names with the same values, in any order.
        public static func == (lhs: Fields, rhs: Fields) -> Bool {
            guard lhs.entries.count == rhs.entries.count else { return false }
            return lhs.entries.allSatisfy { rhs[$0.name] == $0.value }
        }

        /// Hashes the fields without regard to their order, consistently with `==`.
        public func hash(into hasher: inout Hasher) {
            // Order-independent, like `Dictionary`'s hash: combine each field's own hash commutatively.
            var combined = 0
            for (name, value) in entries {
                var fieldHasher = Hasher()
                fieldHasher.combine(name)
                fieldHasher.combine(value)
                combined ^= fieldHasher.finalize()
            }
            hasher.combine(entries.count)
            hasher.combine(combined)
        }
    }
}
