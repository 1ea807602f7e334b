extension CloudValue {
    /// A field type of CloudKit's, named as CloudKit Web Services names it.
    public enum Kind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case string = "STRING"
        case int64 = "INT64"
        case double = "DOUBLE"
        case date = "TIMESTAMP"
        case bytes = "BYTES"
        case reference = "REFERENCE"
        case asset = "ASSETID"
        case location = "LOCATION"
        case stringList = "STRING_LIST"
        case int64List = "INT64_LIST"
        case doubleList = "DOUBLE_LIST"
        case dateList = "TIMESTAMP_LIST"
        case bytesList = "BYTES_LIST"
        case referenceList = "REFERENCE_LIST"
        case assetList = "ASSETID_LIST"
        case locationList = "LOCATION_LIST"

        /// Whether the type is a list type.
        public var isList: Bool { rawValue.hasSuffix("_LIST") }

        /// The Web Services name, for example `TIMESTAMP_LIST`.
        public var description: String { rawValue }
    }
}
