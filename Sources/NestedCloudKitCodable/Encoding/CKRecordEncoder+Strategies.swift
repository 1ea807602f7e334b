import Foundation

extension CKRecordEncoder {
    /// How `Data` values are stored.
    ///
    /// CloudKit fixes a field's type when the field is first saved, so a field must always be Bytes or always an
    /// asset: choose by field, not by size, for data that can grow.
    public enum DataEncodingStrategy: Sendable, Hashable {
        /// As Bytes fields, counted in the record's 1 MB.
        case bytes
        /// As assets, stored beside the record and not counted in its 1 MB.
        case asset
        /// As assets for the fields with these names (coding keys, or flattened names), as Bytes for the others.
        case assets(forFields: Set<String>)
        /// As Bytes up to the given size and as an asset above it; for a list, the list's total size decides.
        ///
        /// Only for fields whose data is always on one side of the threshold: CloudKit rejects an asset for a field
        /// first saved as Bytes, and the other way round.
        case automatic(assetThreshold: Int)
    }

    /// How nested `Codable` values that aren't records are stored: structs, dictionaries, enums with payloads,
    /// arrays that aren't lists of one CloudKit type.
    public enum NestedValueEncodingStrategy: Sendable, Hashable {
        /// As JSON text in a String field, with sorted keys so the same value gives the same text. Dates are
        /// milliseconds since 1970 and bytes are Base64, as in CloudKit Web Services.
        case json
        /// As fields of the record, each named by the property and its nested key joined by the separator:
        /// `address.city` becomes the field `address_city` with `"_"`. Arrays of nested values are still
        /// stored as JSON, under their flattened name.
        case flattened(separator: String)
    }

    /// How `Decimal` values are stored.
    public enum DecimalEncodingStrategy: Sendable, Hashable {
        /// As their exact decimal text in a String field: lossless, but not comparable as a number in queries.
        case string
        /// As a Double field: queryable as a number, rounded to the nearest `Double`.
        case double
    }

    /// What NaN and infinite `Double` and `Float` values become.
    public enum NonFiniteFloatEncodingStrategy: Sendable, Hashable {
        /// They are an error, ``CKCodableError/Code/nonFiniteNumber``: CloudKit Web Services can't carry
        /// them and queries can't compare them.
        case `throw`
        /// They become the given strings. CloudKit fixes a field's type with its first value, so a field that
        /// holds such a string can't also hold numbers: use this for fields that are stored as strings.
        case convertToString(positiveInfinity: String, negativeInfinity: String, nan: String)
    }
}
