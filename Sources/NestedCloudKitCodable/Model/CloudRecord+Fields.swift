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
        /// Positions by name, kept only for records with many fields: below that, comparing short names one by
        /// one is faster than hashing them.
        private var positions: [String: Int]?

        /// The field count above which lookups use a dictionary of positions.
        private static let indexThreshold = 32

        /// Creates an empty set of fields.
        public init() {
            entries = []
        }

        /// Creates an empty set of fields with room for `capacity` of them: what an encoder that knows how many
        /// fields a record will have starts from, so the list is allocated once, at its size.
        package init(capacity: Int) {
            entries = []
            entries.reserveCapacity(capacity)
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

        private func position(of name: String) -> Int? {
            if let positions { return positions[name] }
            return entries.firstIndex { $0.name.hasSameBytes(as: name) }
        }

        /// The value of the named field, or `nil`; setting `nil` removes the field.
        public subscript(name: String) -> CloudValue? {
            get { position(of: name).map { entries[$0].value } }
            set {
                if let newValue {
                    if let position = position(of: name) {
                        entries[position].value = newValue
                    } else {
                        append(name, newValue)
                    }
                } else if let position = position(of: name) {
                    entries.remove(at: position)
                    if positions != nil { rebuildPositions() }
                }
            }
        }

        /// Adds a field whose name isn't taken yet; returns `false`, changing nothing, if the name is taken.
        mutating func insertNew(_ value: CloudValue, named name: String) -> Bool {
            guard position(of: name) == nil else { return false }
            append(name, value)
            return true
        }

        /// The value of the named field, looking first at position `hint` and moving `hint` past the field found:
        /// models read fields in the order they wrote them, so a decoder finds each where the last one ended.
        func value(named name: String, hint: inout Int) -> CloudValue? {
            // The name at the hint is compared where it is stored, as its two words: reading
            // `entries[hinted].name`, even through the buffer, copies the whole entry (a retain and a release of its
            // name and of its value) only to compare the name, a fifth of a mapped model's field read. A model's keys
            // are the literals the record was written with, so the words nearly always match; when they don't, the
            // bytes are compared.
            let hinted = hint
            let isAtHint = entries.withUnsafeBufferPointer { entries -> Bool in
                guard hinted >= 0, hinted < entries.count, let base = entries.baseAddress else { return false }
                // A tuple is laid out as a struct is: its first element, the name, is at its start.
                if name.hasSameRepresentation(asStringAt: UnsafeRawPointer(base + hinted)) { return true }
                return entries[hinted].name.hasSameBytes(as: name)
            }
            if isAtHint {
                hint = hinted + 1
                return entries[hinted].value
            }
            guard let position = position(of: name) else { return nil }
            hint = position + 1
            return entries[position].value
        }

        /// Adds a field the caller knows isn't there yet, without looking: how a store that wrote the fields reads
        /// them back.
        package mutating func appendNew(_ value: CloudValue, named name: String) {
            append(name, value)
        }

        private mutating func append(_ name: String, _ value: CloudValue) {
            entries.append((name, value))
            if positions != nil {
                positions?[name] = entries.count - 1
            } else if entries.count > Self.indexThreshold {
                rebuildPositions()
            }
        }

        private mutating func rebuildPositions() {
            var positions: [String: Int] = [:]
            positions.reserveCapacity(entries.count)
            for (position, entry) in entries.enumerated() { positions[entry.name] = position }
            self.positions = positions
        }

        /// Reserves room for the given number of fields.
        package mutating func reserveCapacity(_ count: Int) {
            entries.reserveCapacity(count)
        }

        /// The position of the first field.
        public var startIndex: Int { entries.startIndex }
        /// The position after the last field.
        public var endIndex: Int { entries.endIndex }
        /// The field at a position, in the order fields were set.
        public subscript(position: Int) -> Element { entries[position] }

        /// Whether a field holds a reference or a reference list. Read in place: a loop over the fields would copy
        /// each name and value out, and every record a decoder or encoder meets is asked.
        var containsReferences: Bool {
            for index in entries.indices {
                switch entries[index].value {
                case .reference, .referenceList: return true
                default: continue
                }
            }
            return false
        }

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

extension CloudRecord {
    /// The field that holds the version of a model's record layout (``CKRecordRepresentable/cloudKitSchemaVersion``),
    /// an `INT64`, in the records of a type that declares one.
    public static let schemaVersionFieldName = "ncsSchemaVersion"

    /// The version of the record layout the record was written with (``schemaVersionFieldName``); `nil` for a record
    /// of a type that declares none, or written before it did.
    public var schemaVersion: Int? {
        if case .int64(let version)? = self[Self.schemaVersionFieldName] { return Int(clamping: version) }
        return nil
    }
}
