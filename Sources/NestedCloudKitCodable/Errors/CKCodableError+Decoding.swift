import Foundation

/// Where in a decode an error happened: the coding path, the record and the field.
struct DecodingLocation {
    let path: CodingPath
    let recordID: CloudRecord.ID?
    let field: String?
}

// Every decoding error is built here, so that each says the same things the same way.
extension CKCodableError {
    private init(_ code: Code, at location: DecodingLocation, reason: String, fix: String?, about: Subject? = nil) {
        self.init(
            code, codingPath: location.path.keys, recordID: location.recordID, field: location.field,
            reason: reason, recoverySuggestion: fix, about: about)
    }

    static func missingField(_ name: String, at location: DecodingLocation) -> Self {
        Self(
            .missingField, at: location,
            reason: "The record has no value for \"\(name)\"",
            fix: "Make the property optional or give it a default in init(from:), or save the record with the field.",
            about: Subject(missingKey: name))
    }

    static func typeMismatch(expected: String, found: String, at location: DecodingLocation) -> Self {
        Self(
            .typeMismatch, at: location,
            reason: "Expected a value for \(expected) but found \(found)",
            fix: "Make the property's type match what the records hold, or migrate the records.")
    }

    static func valueOutOfRange(_ value: String, type: String, at location: DecodingLocation) -> Self {
        Self(
            .valueOutOfRange, at: location,
            reason: "The value \(value) doesn't fit in \(type)",
            fix: "Use a wider type for the property.")
    }

    static func corruptedValue(_ description: String, at location: DecodingLocation) -> Self {
        Self(
            .corruptedValue, at: location,
            reason: "The value can't be read: \(description)",
            fix: "Repair the record, or decode the field with a type that accepts what it holds.")
    }

    static func missingRecord(_ id: CloudRecord.ID, at location: DecodingLocation) -> Self {
        Self(
            .missingRecord, at: location,
            reason: "The referenced record \(id) doesn't exist",
            fix: "Make the property optional (missing records then decode as nil), or save the referenced record.",
            about: Subject(referencedRecordID: id))
    }

    static func referenceCycle(_ id: CloudRecord.ID, at location: DecodingLocation) -> Self {
        Self(
            .referenceCycle, at: location,
            reason: "The record \(id) is reached again through its own references, and a Codable value can't "
                + "contain itself",
            fix: "Make one property of the cycle a CloudLazyReference, which decodes to the record's ID.",
            about: Subject(referencedRecordID: id))
    }

    static func recordTypeMismatch(expected: String, found: String, at location: DecodingLocation) -> Self {
        Self(
            .recordTypeMismatch, at: location,
            reason: "Expected a \(expected) record but found a \(found) record",
            fix: "Check that the reference points to the right record, or that cloudKitRecordType matches.")
    }

    static func depthLimitExceeded(_ limit: Int, at location: DecodingLocation) -> Self {
        Self(
            .depthLimitExceeded, at: location,
            reason: "References nest more than \(limit) levels below the root",
            fix: "Raise the decoder's maximumDepth if the graph really is this deep, or break long chains with "
                + "CloudLazyReference properties.")
    }

    static func recordLimitExceeded(_ limit: Int, at location: DecodingLocation) -> Self {
        Self(
            .recordLimitExceeded, at: location,
            reason: "The graph holds more than \(limit) records",
            fix: "Raise the decoder's maximumRecordCount, or load parts of the graph with CloudLazyReference.")
    }

    static func databaseError(
        _ error: CloudDatabaseError, at location: DecodingLocation, underlying: (any Error)? = nil
    ) -> Self {
        Self(
            .databaseError, codingPath: location.path.keys, recordID: location.recordID, field: location.field,
            reason: "The database failed: \(error)", recoverySuggestion: error.isRetryable ? "Try again later." : nil,
            underlyingError: underlying, about: Subject(databaseError: error))
    }

    /// A database's own error, which isn't a ``CloudDatabaseError``.
    static func foreignDatabaseError(_ error: any Error, at location: DecodingLocation) -> Self {
        databaseError(.internalError("\(error)", underlying: error), at: location, underlying: error)
    }

    static func rejectedByModel(_ error: any Error, description: String, at location: DecodingLocation) -> Self {
        Self(
            .rejectedByModel, codingPath: location.path.keys, recordID: location.recordID,
            field: location.field,
            reason: "The model's init(from:) rejected the record: \(description)",
            recoverySuggestion:
                "Decode values that other versions of the app may write leniently: an enum with a fallback "
                + "case, or decodeIfPresent with a default.",
            underlyingError: error)
    }

    static func cancelled(_ recordID: CloudRecord.ID) -> Self {
        Self(
            .cancelled, codingPath: [], recordID: recordID, field: nil,
            reason: "The decode stopped because its task was cancelled", recoverySuggestion: nil)
    }
}
