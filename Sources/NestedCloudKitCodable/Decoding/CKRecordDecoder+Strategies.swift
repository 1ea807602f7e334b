extension CKRecordDecoder {
    /// What a reference to a record that doesn't exist becomes.
    public enum MissingReferenceStrategy: Sendable, Hashable {
        /// `nil` for an optional property; ``CKCodableError/Code/missingRecord`` for a required one.
        case nilForOptionals
        /// ``CKCodableError/Code/missingRecord`` always.
        case `throw`
    }

    /// How nested values that aren't records were stored.
    public enum NestedValueDecodingStrategy: Sendable, Hashable {
        /// As JSON text in a String field.
        case json
        /// As fields named by the property and its nested keys joined by the separator. JSON fields are still read.
        case flattened(separator: String)
    }

    /// Which strings stand for NaN and infinity.
    public enum NonFiniteFloatDecodingStrategy: Sendable, Hashable {
        /// None: only numbers decode as `Double` and `Float`.
        case `throw`
        /// These strings decode as infinity, negative infinity and NaN.
        case convertFromString(positiveInfinity: String, negativeInfinity: String, nan: String)
    }

    /// How `CloudLocation` values are read.
    public enum LocationDecodingStrategy: Sendable, Hashable {
        /// From Location fields only.
        case location
        /// From Location fields, and from the `"latitude;longitude"` strings that version 1.0 stored.
        case acceptingLegacyStrings
    }
}
