extension CloudValue {
    /// A field type of CloudKit's, named as CloudKit Web Services names it.
    public enum Kind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// A string.
        case string = "STRING"
        /// A 64-bit signed integer (also booleans).
        case int64 = "INT64"
        /// A double-precision number.
        case double = "DOUBLE"
        /// A point in time, to the millisecond.
        case date = "TIMESTAMP"
        /// Raw bytes.
        case bytes = "BYTES"
        /// A reference to another record.
        case reference = "REFERENCE"
        /// A file stored beside the record.
        case asset = "ASSETID"
        /// A geographic location.
        case location = "LOCATION"
        /// A list of strings.
        case stringList = "STRING_LIST"
        /// A list of integers.
        case int64List = "INT64_LIST"
        /// A list of doubles.
        case doubleList = "DOUBLE_LIST"
        /// A list of dates.
        case dateList = "TIMESTAMP_LIST"
        /// A list of byte buffers.
        case bytesList = "BYTES_LIST"
        /// A list of references.
        case referenceList = "REFERENCE_LIST"
        /// A list of assets.
        case assetList = "ASSETID_LIST"
        /// A list of locations.
        case locationList = "LOCATION_LIST"

        /// Whether the type is a list type.
        package var isList: Bool { rawValue.hasSuffix("_LIST") }

        /// The type of a list's elements; a single value's own type.
        var elementKind: Kind {
            guard isList else { return self }
            return Kind(rawValue: String(rawValue.dropLast("_LIST".count))) ?? self
        }

        /// The Web Services name, for example `TIMESTAMP_LIST`.
        public var description: String { rawValue }
    }
}
