import Foundation

/// An error from encoding values into records or decoding them back: what went wrong, where, and how to fix it.
///
/// Every error names the place it happened: the coding path from the root value (``codingPath``), the record
/// being built or read (``recordID``) and the field (``field``). Match on ``code`` to handle a case (a later
/// release may add codes, so a `switch` over it needs a `default`):
///
/// ```swift
/// do {
///     let records = try CKRecordEncoder().encode(school)
/// } catch let error as CKCodableError {
///     if error.code == .recordTooLarge { ... }
///     print(error)   // what, where and how to fix it
/// }
/// ```
public struct CKCodableError: Error, Sendable, CustomStringConvertible, LocalizedError {
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
    /// ``Code/rejectedByModel``, a database's own error for ``Code/databaseError``.
    public let underlyingError: (any Error)?

    /// The record a reference names: the one that doesn't exist (``Code/missingRecord``), or the one reached
    /// again through its own references (``Code/referenceCycle``). (For ``Code/conflictingRecordID``, the ID two
    /// values claim is ``recordID``.)
    public let referencedRecordID: CloudRecord.ID?

    /// The database's error, for ``Code/databaseError``: whether it is retryable
    /// (``CloudDatabaseError/isRetryable``), and what it is about.
    public let databaseError: CloudDatabaseError?

    /// The key the record lacks, for ``Code/missingField``: the field, or a key nested in it, which a model's
    /// `init(from:)` sees as `DecodingError.keyNotFound`.
    let missingKey: String?

    /// Creates an error. The library builds its errors in one place; this initializer is public so that custom
    /// `encode(to:)` and `init(from:)` implementations can throw errors of the same form.
    public init(
        _ code: Code,
        codingPath: [any CodingKey],
        recordID: CloudRecord.ID? = nil,
        field: String? = nil,
        reason: String,
        recoverySuggestion: String? = nil,
        underlyingError: (any Error)? = nil,
        referencedRecordID: CloudRecord.ID? = nil,
        databaseError: CloudDatabaseError? = nil
    ) {
        self.init(
            code, codingPath: codingPath, recordID: recordID, field: field, reason: reason,
            recoverySuggestion: recoverySuggestion, underlyingError: underlyingError,
            about: Subject(referencedRecordID: referencedRecordID, databaseError: databaseError))
    }

    /// What an error is about beside its record and field, each for the codes it belongs to.
    struct Subject {
        var referencedRecordID: CloudRecord.ID?
        var databaseError: CloudDatabaseError?
        var missingKey: String?
    }

    init(
        _ code: Code, codingPath: [any CodingKey], recordID: CloudRecord.ID? = nil, field: String? = nil,
        reason: String, recoverySuggestion: String? = nil, underlyingError: (any Error)? = nil, about subject: Subject?
    ) {
        self.code = code
        self.codingPath = codingPath
        self.recordID = recordID
        self.field = field
        self.reason = reason
        self.recoverySuggestion = recoverySuggestion
        self.underlyingError = underlyingError
        self.referencedRecordID = subject?.referencedRecordID
        self.databaseError = subject?.databaseError
        self.missingKey = subject?.missingKey
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
