import Foundation

extension CloudSchema {
    /// A field's type as CloudKit's schema language writes it: `STRING`, `LIST<INT64>`, `ENCRYPTED STRING`,
    /// `NUMBER PREFERRED AS INT64`.
    ///
    /// CloudKit fixes a field's type when the field is created, encryption and list-ness included: a deployed field
    /// never changes type (``CloudSchema/checkDeployable(against:)``).
    public struct FieldType: Sendable, Hashable, CustomStringConvertible {
        /// The type of one value.
        public enum Base: String, Sendable, Hashable, CaseIterable {
            /// A file stored beside the record.
            case asset = "ASSET"
            /// Raw bytes, counted in the record's 1 MB.
            case bytes = "BYTES"
            /// A double-precision number.
            case double = "DOUBLE"
            /// A 64-bit signed integer; booleans too.
            case int64 = "INT64"
            /// A geographic location.
            case location = "LOCATION"
            /// A number whose type the first value fixed, in a schema CloudKit made just in time: see
            /// ``FieldType/preferredNumber``.
            case number = "NUMBER"
            /// A reference to another record.
            case reference = "REFERENCE"
            /// A string.
            case string = "STRING"
            /// A point in time, to the millisecond.
            case timestamp = "TIMESTAMP"

            /// The bases CloudKit can encrypt: not assets (always encrypted), references (kept readable for the
            /// server) or numbers of unfixed type.
            package static let encryptable: Set<Base> = [.bytes, .string, .double, .int64, .location, .timestamp]
        }

        /// The type of each value.
        public var base: Base
        /// Whether CloudKit encrypts the values with the user's keys (`CKRecord.encryptedValues`).
        public var isEncrypted: Bool
        /// Whether the field holds a list of values.
        public var isList: Bool
        /// For ``Base/number``: the type its values take, `INT64` or `DOUBLE` (`NUMBER PREFERRED AS INT64`);
        /// `nil` for any other base, and for a number without a preference.
        public var preferredNumber: Base?

        /// A field type.
        ///
        /// - Parameters:
        ///   - base: The type of each value.
        ///   - encrypted: Whether CloudKit encrypts the values; only bases in `Base/encryptable` can be.
        ///   - list: Whether the field holds a list.
        ///   - preferredNumber: For ``Base/number``, the type its values take.
        public init(_ base: Base, encrypted: Bool = false, list: Bool = false, preferredNumber: Base? = nil) {
            self.base = base
            isEncrypted = encrypted
            isList = list
            self.preferredNumber = base == .number ? preferredNumber : nil
        }

        /// The type of fields holding values of a kind, encrypted or not.
        package init(_ kind: CloudValue.Kind, encrypted: Bool = false) {
            let base: Base =
                switch kind.elementKind {
                case .string: .string
                case .int64: .int64
                case .double: .double
                case .date: .timestamp
                case .bytes: .bytes
                case .reference: .reference
                case .asset: .asset
                case .location: .location
                default: .string
                }
            self.init(base, encrypted: encrypted, list: kind.isList)
        }

        /// A list of values of this type: `LIST<STRING>`.
        package var asList: FieldType {
            var list = self
            list.isList = true
            return list
        }

        /// The kind of value a record holds in such a field, as the coders and databases name kinds; `nil` for a
        /// number without a preference.
        package var valueKind: CloudValue.Kind? {
            let single: CloudValue.Kind? =
                switch base {
                case .asset: .asset
                case .bytes: .bytes
                case .double: .double
                case .int64: .int64
                case .location: .location
                case .reference: .reference
                case .string: .string
                case .timestamp: .date
                case .number: preferredNumber.flatMap { FieldType($0).valueKind }
                }
            guard let single, isList else { return single }
            return CloudValue.Kind(rawValue: single.rawValue + "_LIST")
        }

        /// Whether such a field holds a value: one of its kind (encrypted or not), an empty list in a list field
        /// (an empty list has no element type), a number in a number field without a preference.
        package func holds(_ value: CloudValue) -> Bool {
            guard let kind = valueKind else { return !isList && [.int64, .double].contains(value.kind) }
            return value.kind == kind || (isList && value.isEmptyList)
        }

        /// The indexes CloudKit allows on such a field: none on an encrypted field, full text on strings only, no
        /// order on a list.
        package var allowedIndexes: Indexes {
            if isEncrypted { return [] }
            var allowed: Indexes = isList ? .queryable : [.queryable, .sortable]
            if base == .string { allowed.insert(.searchable) }
            return allowed
        }

        /// The type as the schema language writes it.
        public var description: String {
            var single = base.rawValue
            if let preferredNumber { single += " PREFERRED AS \(preferredNumber.rawValue)" }
            if isEncrypted { single = "ENCRYPTED " + single }
            return isList ? "LIST<\(single)>" : single
        }

        /// What's wrong with the type, if CloudKit can't have it.
        var problem: String? {
            if isEncrypted, !Base.encryptable.contains(base) {
                return "ENCRYPTED \(base.rawValue) isn't a type: CloudKit encrypts "
                    + Base.allCases.filter(Base.encryptable.contains).map(\.rawValue).joined(separator: ", ")
                    + (base == .asset ? "; assets are always encrypted" : "")
            }
            if let preferredNumber, ![.int64, .double].contains(preferredNumber) {
                return "NUMBER PREFERRED AS \(preferredNumber.rawValue) isn't a type: a number is INT64 or DOUBLE"
            }
            return nil
        }
    }
}
