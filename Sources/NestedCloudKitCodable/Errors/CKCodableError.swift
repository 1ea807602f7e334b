import Foundation

/// An error from encoding values into records or decoding them back: what went wrong, where, and how to fix it.
///
/// Every error names the place it happened: the coding path from the root value (``codingPath``), the record
/// being built or read (``recordID``) and the field (``field``). Match on ``code`` to handle a case:
///
/// ```swift
/// do {
///     let records = try CKRecordEncoder().encode(school)
/// } catch let error as CKCodableError {
///     if case .recordTooLarge = error.code { ... }
///     print(error)   // what, where and how to fix it
/// }
/// ```
public struct CKCodableError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What went wrong.
    public enum Code: Sendable, Hashable {
        /// A record name that CloudKit rejects: empty, longer than 255 characters, not ASCII, or starting with
        /// an underscore.
        case invalidRecordName(String)
        /// A record type that CloudKit rejects: not letters, digits and underscores starting with a letter, or
        /// longer than 255 characters.
        case invalidRecordType(String)
        /// A field name that CloudKit rejects: not letters, digits and underscores starting with a letter, or
        /// longer than 255 characters.
        case invalidFieldName(String)
        /// A field name that CloudKit reserves for a record's own properties, such as `recordID`.
        case reservedFieldName(String)
        /// Two values written to one field name, for example by flattening a nested value.
        case duplicateFieldName(String)
        /// A record whose field data exceeds CloudKit's limit of 1 MB (assets are not counted).
        case recordTooLarge(size: Int, limit: Int)
        /// Two different values that claim the same record ID.
        case conflictingRecordID(CloudRecord.ID)
        /// A field option given by name (``CloudFieldOptions`` or version 1.0's instance methods) that names
        /// neither a key the type encodes nor one of its properties: most likely a misspelling.
        case unknownFieldOption(String)
        /// A field declared encrypted whose value CloudKit can't encrypt: a reference or an asset.
        case unencryptableValue(String)
        /// The field declared as the record's parent (``CloudFieldOptions/parentField``) holds something other
        /// than one reference.
        case invalidParentField(String)
        /// A field declared an asset (``CloudFieldOptions/assetFields``) whose value can't be one: not `Data`, a
        /// file URL or a ``CloudAsset``.
        case invalidAssetField(String)
        /// An integer outside the range of CloudKit's 64-bit signed integers (a `UInt64`, `Int128` or `UInt128`
        /// too large for them).
        case integerOverflow(String)
        /// A NaN or infinite floating-point value while the encoder's strategy is to reject them.
        case nonFiniteNumber(String)
        /// A `CKEncodable` value that didn't encode itself as keyed fields, which a record needs.
        case recordNotKeyed(recordType: String)
        /// A `CKEncodable` value inside a value that is embedded in a field, where it can't become a record.
        case referenceInEmbeddedValue(recordType: String)
        /// An asset inside a value that is embedded in a field, where it can't be uploaded.
        case assetInEmbeddedValue
        /// A date that isn't finite or lies beyond what CloudKit's millisecond timestamps hold.
        case dateOutOfRange(String)
        /// A list of URLs mixing file URLs (assets) and other URLs (strings), which no CloudKit list type holds.
        case mixedURLList

        /// A required field (or nested key) that the record doesn't have.
        case missingField(String)
        /// A value of another type than the model asks for; both are named, for example `INT64` and `String`.
        case typeMismatch(expected: String, found: String)
        /// A number that doesn't fit the model's type, such as 300 for a `UInt8`.
        case valueOutOfRange(String)
        /// A value of the right type whose contents can't be read, such as malformed embedded JSON or a string
        /// that isn't a UUID.
        case corruptedValue(String)
        /// A reference to a record that doesn't exist, for a property that needs it.
        case missingRecord(CloudRecord.ID)
        /// Records that reference each other in a cycle that `Codable` values can't rebuild.
        case referenceCycle(CloudRecord.ID)
        /// A record of another type than the model's `cloudKitRecordType`.
        case recordTypeMismatch(expected: String, found: String)
        /// References nested deeper below the root than the decoder's maximum.
        case depthLimitExceeded(limit: Int)
        /// More records than the decoder's maximum.
        case recordLimitExceeded(limit: Int)
        /// The database failed to fetch a record. A database that throws errors of its own, not
        /// ``CloudDatabaseError``s, has them described here as ``CloudDatabaseError/internalError(_:)``, the
        /// original in ``CKCodableError/underlyingError``.
        case databaseError(CloudDatabaseError)
        /// The model's own `init(from:)` or `encode(to:)` threw: for example an enum meeting a raw value it has no
        /// case for, which is what an older app sees after a newer one adds a case. The model's error is
        /// ``CKCodableError/underlyingError``.
        case rejectedByModel(String)
        /// The task running the decode was cancelled.
        case cancelled
    }

    /// What went wrong.
    public let code: Code

    /// The coding path from the root value to the value that failed.
    public let codingPath: [any CodingKey]

    /// The record being encoded or decoded, when the error belongs to one.
    public let recordID: CloudRecord.ID?

    /// The field of that record, when the error belongs to one.
    public let field: String?

    /// What happened, in a sentence.
    public let reason: String

    /// How to fix it.
    public let recoverySuggestion: String?

    /// The error that caused this one, when it came from outside the library: the model's own error for
    /// ``Code/rejectedByModel(_:)``, a database's own error for ``Code/databaseError(_:)``.
    public let underlyingError: (any Error)?

    /// Creates an error. The library builds its errors in one place; this initializer is public so that custom
    /// `encode(to:)` and `init(from:)` implementations can throw errors of the same form.
    public init(
        _ code: Code,
        codingPath: [any CodingKey],
        recordID: CloudRecord.ID? = nil,
        field: String? = nil,
        reason: String,
        recoverySuggestion: String? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.codingPath = codingPath
        self.recordID = recordID
        self.field = field
        self.reason = reason
        self.recoverySuggestion = recoverySuggestion
        self.underlyingError = underlyingError
    }

    /// What happened and where: the reason, the coding path, the record and the field.
    public var errorDescription: String? {
        var where_: [String] = ["at \(codingPath.pathDescription)"]
        if let recordID { where_.append("record \(recordID)") }
        if let field { where_.append("field \"\(field)\"") }
        return "\(reason) (\(where_.joined(separator: ", ")))"
    }

    /// What happened, where, and how to fix it.
    public var description: String {
        let what = errorDescription ?? reason
        guard let recoverySuggestion else { return what }
        return "\(what). \(recoverySuggestion)"
    }
}
