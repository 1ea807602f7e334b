import Foundation

/// Where in a decode an error happened: the coding path, the record and the field.
struct DecodingLocation {
    let path: CodingPath
    let recordID: CloudRecord.ID?
    let field: String?
}

// Every decoding error is built here, so that each says the same things the same way.
extension CKCodableError {
    private init(_ code: Code, at location: DecodingLocation, reason: String, fix: String?) {
        self.init(
            code, codingPath: location.path.keys, recordID: location.recordID, field: location.field,
            reason: reason, recoverySuggestion: fix)
    }

    static func missingField(_ name: String, at location: DecodingLocation) -> Self {
        Self(
            .missingField(name), at: location,
            reason: "The record has no value for \"\(name)\"",
            fix: "Make the property optional or give it a default in init(from:), or save the record with the field.")
    }

    static func typeMismatch(expected: String, found: String, at location: DecodingLocation) -> Self {
        Self(
            .typeMismatch(expected: expected, found: found), at: location,
            reason: "Expected a value for \(expected) but found \(found)",
            fix: "Make the property's type match what the records hold, or migrate the records.")
    }

    static func valueOutOfRange(_ value: String, type: String, at location: DecodingLocation) -> Self {
        Self(
            .valueOutOfRange(value), at: location,
            reason: "The value \(value) doesn't fit in \(type)",
            fix: "Use a wider type for the property.")
    }

    static func corruptedValue(_ description: String, at location: DecodingLocation) -> Self {
        Self(
            .corruptedValue(description), at: location,
            reason: "The value can't be read: \(description)",
            fix: "Repair the record, or decode the field with a type that accepts what it holds.")
    }

    static func missingRecord(_ id: CloudRecord.ID, at location: DecodingLocation) -> Self {
        Self(
            .missingRecord(id), at: location,
            reason: "The referenced record \(id) doesn't exist",
            fix: "Make the property optional (missing records then decode as nil), or save the referenced record.")
    }

    static func referenceCycle(_ id: CloudRecord.ID, at location: DecodingLocation) -> Self {
        Self(
            .referenceCycle(id), at: location,
            reason: "The record \(id) is reached again through its own references, and a Codable value can't "
                + "contain itself",
            fix: "Make one property of the cycle a CloudLazyReference, which decodes to the record's ID.")
    }

    static func recordTypeMismatch(expected: String, found: String, at location: DecodingLocation) -> Self {
        Self(
            .recordTypeMismatch(expected: expected, found: found), at: location,
            reason: "Expected a \(expected) record but found a \(found) record",
            fix: "Check that the reference points to the right record, or that cloudKitRecordType matches.")
    }

    static func depthLimitExceeded(_ limit: Int, at location: DecodingLocation) -> Self {
        Self(
            .depthLimitExceeded(limit: limit), at: location,
            reason: "References nest more than \(limit) levels below the root",
            fix: "Raise the decoder's maximumDepth if the graph really is this deep, or break long chains with "
                + "CloudLazyReference properties.")
    }

    static func recordLimitExceeded(_ limit: Int, at location: DecodingLocation) -> Self {
        Self(
            .recordLimitExceeded(limit: limit), at: location,
            reason: "The graph holds more than \(limit) records",
            fix: "Raise the decoder's maximumRecordCount, or load parts of the graph with CloudLazyReference.")
    }

    static func databaseError(
        _ error: CloudDatabaseError, at location: DecodingLocation, underlying: (any Error)? = nil
    ) -> Self {
        Self(
            .databaseError(error), codingPath: location.path.keys, recordID: location.recordID, field: location.field,
            reason: "The database failed: \(error)", recoverySuggestion: error.isRetryable ? "Try again later." : nil,
            underlyingError: underlying)
    }

    /// A database's own error, which isn't a ``CloudDatabaseError``.
    static func foreignDatabaseError(_ error: any Error, at location: DecodingLocation) -> Self {
        databaseError(.internalError("\(error)", underlying: error), at: location, underlying: error)
    }

    static func rejectedByModel(_ error: any Error, description: String, at location: DecodingLocation) -> Self {
        Self(
            .rejectedByModel(description), codingPath: location.path.keys, recordID: location.recordID,
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
