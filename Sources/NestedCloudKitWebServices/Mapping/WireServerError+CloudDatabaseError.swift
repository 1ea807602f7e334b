import Foundation
import NestedCloudKitCodable

extension WireServerError {
    /// Whether the server refused a save because its record changed (`CONFLICT`) or exists (`EXISTS`): the client
    /// fetches the server's record to report ``CloudDatabaseError/serverRecordChanged(server:client:ancestor:)``.
    var isConflict: Bool {
        serverErrorCode == "CONFLICT" || serverErrorCode == "EXISTS"
    }

    /// The portable error for this error dictionary.
    ///
    /// - Parameters:
    ///   - recordID: The record the error is about, for a per-record error.
    ///   - zoneID: The zone of the request.
    func databaseError(recordID: CloudRecord.ID?, zoneID: CloudRecord.ZoneID) -> CloudDatabaseError {
        let reason = self.reason.map { "\($0) (\(serverErrorCode))" } ?? serverErrorCode
        switch serverErrorCode {
        case "ACCESS_DENIED":
            return .permissionFailure("\(reason): the credentials can't reach this database or record")
        case "ATOMIC_ERROR":
            if let recordID { return .batchRequestFailed(recordID) }
            return .invalidArguments("\(reason): another item of the atomic request failed")
        case "AUTHENTICATION_FAILED":
            return .permissionFailure(
                "\(reason): check the key ID, that the key belongs to this container and environment, and the clock"
            )
        case "AUTHENTICATION_REQUIRED":
            return .notAuthenticated(signInURL: signInURL)
        case "BAD_REQUEST" where isTooLarge:
            return .limitExceeded(limit: nil, requested: nil)
        case "BAD_REQUEST":
            return .invalidArguments(reason)
        case "NOT_FOUND":
            if let recordID { return .unknownItem(recordID) }
            return .invalidArguments("\(reason): check the container identifier and the environment")
        case "QUOTA_EXCEEDED":
            return .quotaExceeded
        case "THROTTLED":
            return .requestRateLimited(retryAfter: retryAfter ?? 0)
        case "TRY_AGAIN_LATER":
            return .serviceUnavailable(retryAfter: retryAfter)
        case "VALIDATING_REFERENCE_ERROR":
            if let recordID { return .referenceViolation(recordID, reason: reason) }
            return .invalidArguments(reason)
        case "ZONE_NOT_FOUND":
            return .zoneNotFound(zoneID)
        case "INTERNAL_ERROR" where retryAfter != nil:
            return .serviceUnavailable(retryAfter: retryAfter)
        default:
            // INTERNAL_ERROR, a CONFLICT the caller couldn't resolve, and codes this version doesn't know.
            return .internalError(reason + (uuid.map { ", request \($0)" } ?? ""))
        }
    }

    /// Whether the error refuses a record or a request for its size.
    ///
    /// The reference documents no code for it (the framework has `CKError.Code.limitExceeded`, whose server message
    /// for one record is "record too large"): `BAD_REQUEST` whose reason starts `record too large` or `request too
    /// large`, as the emulator answers, is ``CloudDatabaseError/limitExceeded(limit:requested:)``, so that a caller
    /// splits its batch, or gives up on one record, as against the other backends.
    var isTooLarge: Bool {
        guard serverErrorCode == "BAD_REQUEST", let reason = reason?.lowercased() else { return false }
        return reason.hasPrefix("record too large") || reason.hasPrefix("request too large")
    }

    /// Whether the error says a sync token is no longer honoured.
    ///
    /// CloudKit Web Services documents no error code for an expired sync token (the reference's error codes are
    /// ACCESS_DENIED through ZONE_NOT_FOUND, none of them about tokens), while the framework has
    /// `CKError.Code.changeTokenExpired`. Recognised, as the best that can be done without a documented form:
    /// - `CHANGE_TOKEN_EXPIRED`, the framework's name in Web Services' spelling, should the server send it;
    /// - `BAD_REQUEST` whose reason speaks of an expired or reset token (`"sync token expired"`, `"syncToken has
    ///   been reset"`): the documented code for a request the server won't take, with the reason saying why.
    /// Any other `BAD_REQUEST` stays ``CloudDatabaseError/invalidArguments(_:)``.
    var isExpiredSyncToken: Bool {
        if serverErrorCode == "CHANGE_TOKEN_EXPIRED" { return true }
        guard serverErrorCode == "BAD_REQUEST", let reason = reason?.lowercased() else { return false }
        return reason.contains("token") && (reason.contains("expired") || reason.contains("reset"))
    }

    /// The portable error for an error dictionary answering `changes/zone` or `changes/database`: an expired sync
    /// token is ``CloudDatabaseError/changeTokenExpired(_:)`` (with the zone, or `nil` for the database's token),
    /// `ZONE_NOT_FOUND` names the zone asked for, and anything else maps as for any request.
    func changesError(zoneID: CloudRecord.ZoneID?) -> CloudDatabaseError {
        if isExpiredSyncToken { return .changeTokenExpired(zoneID) }
        return databaseError(recordID: nil, zoneID: zoneID ?? .default)
    }

    /// The error of a response whose body isn't an error dictionary, from its HTTP status.
    static func databaseError(status: Int, body: String) -> CloudDatabaseError {
        let detail = "HTTP \(status)" + (body.isEmpty ? "" : ": \(body.prefix(200))")
        switch status {
        case 401, 403: return .permissionFailure(detail)
        case 421: return .notAuthenticated(signInURL: nil)
        case 429: return .requestRateLimited(retryAfter: 0)
        case 503: return .serviceUnavailable(retryAfter: nil)
        case 500...: return .internalError(detail)
        default: return .invalidArguments(detail)
        }
    }
}

extension CloudDatabaseError {
    /// ``CloudDatabaseError/notAuthenticated``, with where CloudKit says the user signs in (the error dictionary's
    /// `redirectURL`).
    ///
    /// ADAPT (issue 12): the core's `notAuthenticated` has no payload yet, so the URL is dropped here and kept by
    /// ``CloudKitWebServicesDatabase/signInURL`` instead. Once `CloudDatabaseError` declares
    /// `case notAuthenticated(signInURL: URL?)`, this function clashes with the case: delete it, and every call
    /// site builds the case itself, URL included, with no other change.
    static func notAuthenticated(signInURL: URL?) -> CloudDatabaseError {
        .notAuthenticated
    }
}
