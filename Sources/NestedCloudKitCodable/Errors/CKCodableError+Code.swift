extension CKCodableError {
    /// What kind of failure an error is: compare with `==`, or `switch` over it with a `default`, as a later
    /// release may add codes. What the error is about is in the error: ``CKCodableError/field``,
    /// ``CKCodableError/recordID``, ``CKCodableError/referencedRecordID``, ``CKCodableError/databaseError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as logs give it.
        public let description: String

        private init(_ name: String) { description = name }

        /// A record name that CloudKit rejects: empty, longer than 255 characters, not ASCII, or starting with
        /// an underscore.
        public static let invalidRecordName = Code("invalidRecordName")
        /// A record type that CloudKit rejects: not letters, digits and underscores starting with a letter, or
        /// longer than 255 characters.
        public static let invalidRecordType = Code("invalidRecordType")
        /// A field name that CloudKit rejects: not letters, digits and underscores starting with a letter, or
        /// longer than 255 characters.
        public static let invalidFieldName = Code("invalidFieldName")
        /// A field name that CloudKit reserves for a record's own properties, such as `recordID`.
        public static let reservedFieldName = Code("reservedFieldName")
        /// Two values written to one field name, for example by flattening a nested value.
        public static let duplicateFieldName = Code("duplicateFieldName")
        /// A record whose field data exceeds CloudKit's limit of 1 MB (assets are not counted).
        public static let recordTooLarge = Code("recordTooLarge")
        /// Two different values that claim the same record ID.
        public static let conflictingRecordID = Code("conflictingRecordID")
        /// A field option given by name (``CloudFieldOptions`` or version 1.0's instance methods) that names
        /// neither a key the type encodes nor one of its properties: most likely a misspelling.
        public static let unknownFieldOption = Code("unknownFieldOption")
        /// A field declared encrypted whose value CloudKit can't encrypt: a reference or an asset.
        public static let unencryptableValue = Code("unencryptableValue")
        /// The field declared as the record's parent (``CloudFieldOptions/parentField``) holds something other
        /// than one reference.
        public static let invalidParentField = Code("invalidParentField")
        /// A field declared an asset (``CloudFieldOptions/assetFields``) whose value can't be one: not `Data`, a
        /// file URL or a ``CloudAsset``.
        public static let invalidAssetField = Code("invalidAssetField")
        /// An integer outside the range of CloudKit's 64-bit signed integers (a `UInt64`, `Int128` or `UInt128`
        /// too large for them).
        public static let integerOverflow = Code("integerOverflow")
        /// A NaN or infinite floating-point value while the encoder's strategy is to reject them.
        public static let nonFiniteNumber = Code("nonFiniteNumber")
        /// A `CKEncodable` value that didn't encode itself as keyed fields, which a record needs.
        public static let recordNotKeyed = Code("recordNotKeyed")
        /// A `CKEncodable` value inside a value that is embedded in a field, where it can't become a record.
        public static let referenceInEmbeddedValue = Code("referenceInEmbeddedValue")
        /// An asset inside a value that is embedded in a field, where it can't be uploaded.
        public static let assetInEmbeddedValue = Code("assetInEmbeddedValue")
        /// A date that isn't finite or lies beyond what CloudKit's millisecond timestamps hold.
        public static let dateOutOfRange = Code("dateOutOfRange")
        /// A list of URLs mixing file URLs (assets) and other URLs (strings), which no CloudKit list type holds.
        public static let mixedURLList = Code("mixedURLList")

        /// A required field (or nested key) that the record doesn't have.
        public static let missingField = Code("missingField")
        /// A value of another type than the model asks for; both are named, for example `INT64` and `String`.
        public static let typeMismatch = Code("typeMismatch")
        /// A number that doesn't fit the model's type, such as 300 for a `UInt8`.
        public static let valueOutOfRange = Code("valueOutOfRange")
        /// A value of the right type whose contents can't be read, such as malformed embedded JSON or a string
        /// that isn't a UUID.
        public static let corruptedValue = Code("corruptedValue")
        /// A reference to a record that doesn't exist, for a property that needs it.
        public static let missingRecord = Code("missingRecord")
        /// Records that reference each other in a cycle that `Codable` values can't rebuild.
        public static let referenceCycle = Code("referenceCycle")
        /// A record of another type than the model's `cloudKitRecordType`.
        public static let recordTypeMismatch = Code("recordTypeMismatch")
        /// References nested deeper below the root than the decoder's maximum.
        public static let depthLimitExceeded = Code("depthLimitExceeded")
        /// More records than the decoder's maximum.
        public static let recordLimitExceeded = Code("recordLimitExceeded")
        /// The database failed to fetch a record. A database that throws errors of its own, not
        /// ``CloudDatabaseError``s, has them described here as ``CloudDatabaseError/internalError(_:)``, the
        /// original in ``CKCodableError/underlyingError``.
        public static let databaseError = Code("databaseError")
        /// The model's own `init(from:)` or `encode(to:)` threw: for example an enum meeting a raw value it has no
        /// case for, which is what an older app sees after a newer one adds a case. The model's error is
        /// ``CKCodableError/underlyingError``.
        public static let rejectedByModel = Code("rejectedByModel")
        /// The task running the decode was cancelled.
        public static let cancelled = Code("cancelled")
    }
}
