import Foundation
import NestedCloudKitCodable

/// An error as CloudKit Web Services reports it: a documented code, the HTTP status the documentation gives it,
/// and a reason in words.
struct ServerError: Error, Sendable {
    /// The documented `serverErrorCode`s.
    enum Code: String, Sendable, CaseIterable {
        case accessDenied = "ACCESS_DENIED"
        case atomicError = "ATOMIC_ERROR"
        case authenticationFailed = "AUTHENTICATION_FAILED"
        case authenticationRequired = "AUTHENTICATION_REQUIRED"
        case badRequest = "BAD_REQUEST"
        case conflict = "CONFLICT"
        case exists = "EXISTS"
        case internalError = "INTERNAL_ERROR"
        case notFound = "NOT_FOUND"
        case quotaExceeded = "QUOTA_EXCEEDED"
        case throttled = "THROTTLED"
        case tryAgainLater = "TRY_AGAIN_LATER"
        case validatingReferenceError = "VALIDATING_REFERENCE_ERROR"
        case zoneNotFound = "ZONE_NOT_FOUND"

        /// The status Apple's error-code table gives each code.
        var httpStatus: Int {
            switch self {
            case .accessDenied: 403
            case .atomicError, .badRequest: 400
            case .authenticationFailed: 401
            case .authenticationRequired: 421
            case .conflict, .exists: 409
            case .internalError: 500
            case .notFound, .zoneNotFound: 404
            case .quotaExceeded: 413
            case .throttled: 429
            case .tryAgainLater: 503
            case .validatingReferenceError: 412
            }
        }
    }

    var code: Code
    var reason: String
    var retryAfter: Double?
    var redirectURL: String?
    /// The HTTP status, when it isn't the code's: 413 for a body too large to read, which Apple's table has no code
    /// for (its 413, `QUOTA_EXCEEDED`, means the storage quota).
    var status: Int?
    /// A new UUID per error, as CloudKit gives one; clients only log it.
    var uuid = UUID().uuidString

    init(_ code: Code, _ reason: String, retryAfter: Double? = nil, redirectURL: String? = nil, status: Int? = nil) {
        self.code = code
        self.reason = reason
        self.retryAfter = retryAfter
        self.redirectURL = redirectURL
        self.status = status
    }

    /// The HTTP status the error is answered with.
    var httpStatus: Int { status ?? code.httpStatus }

    /// The request-level error dictionary.
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "serverErrorCode": .string(code.rawValue), "reason": .string(reason), "uuid": .string(uuid),
        ]
        if let retryAfter { members["retryAfter"] = .double(retryAfter) }
        if let redirectURL { members["redirectURL"] = .string(redirectURL) }
        return .object(members)
    }

    /// The answer for one item (a record, zone or subscription) of a request that otherwise succeeded.
    func item(_ identifying: [String: JSONValue]) -> JSONValue {
        guard case .object(var members) = json else { return json }
        members.merge(identifying) { _, new in new }
        return .object(members)
    }

    static func badRequest(_ reason: String) -> ServerError { ServerError(.badRequest, reason) }

    /// CloudKit's reason for a sync token it no longer serves. Web Services documents no code for it; the
    /// client recognises `BAD_REQUEST` with this reason (see FIDELITY.md).
    static let expiredTokenReason = "sync token expired: fetch again without a syncToken"

    /// The wire form of an error from the database that holds the emulator's data. Its words may quote the storage
    /// (a SQLite or file system error), so file paths are taken out.
    init(_ error: CloudDatabaseError) {
        self.init(databaseError: error)
        reason = FilePaths.removed(from: reason)
    }

    private init(databaseError error: CloudDatabaseError) {
        switch error.kind {
        case .unknownItem: self.init(.notFound, error.description)
        case .serverRecordChanged: self.init(.conflict, error.description)
        case .zoneNotFound, .userDeletedZone, .encryptedDataReset: self.init(.zoneNotFound, error.description)
        case .referenceViolation: self.init(.validatingReferenceError, error.description)
        case .batchRequestFailed: self.init(.atomicError, error.description)
        case .changeTokenExpired: self.init(.badRequest, Self.expiredTokenReason)
        // The reason alone: a client puts its own words ("Invalid request: ", "Not permitted: ") before it.
        case .invalidArguments(let reason): self.init(.badRequest, reason)
        case .limitExceeded, .partialFailure: self.init(.badRequest, error.description)
        case .requestRateLimited: self.init(.throttled, error.description, retryAfter: error.retryAfter)
        case .serviceUnavailable, .networkFailure, .serverResponseLost, .accountTemporarilyUnavailable:
            self.init(.tryAgainLater, error.description, retryAfter: error.retryAfter)
        case .quotaExceeded: self.init(.quotaExceeded, error.description)
        case .permissionFailure(let reason): self.init(.accessDenied, reason)
        case .notAuthenticated: self.init(.authenticationRequired, error.description)
        case .internalError, .operationCancelled: self.init(.internalError, error.description)
        }
    }
}
