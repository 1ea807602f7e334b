import Foundation

/// An error from a ``CloudDatabase``, modelled on CloudKit's `CKError` codes so that code written against one
/// backend handles the others' failures the same way.
///
/// Errors about one record of a request come back in that record's `Result`; errors about the whole request are
/// thrown. ``isRetryable`` and ``retryAfter`` say whether and when to try again.
public enum CloudDatabaseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The record doesn't exist (or no longer does).
    case unknownItem(CloudRecord.ID)
    /// The server's record has changed since the client's copy was fetched (`ifServerRecordUnchanged`), or a
    /// record being created already exists. Carries the server's record, the client's record and, when the server
    /// still knows it, the version the client's copy came from.
    case serverRecordChanged(server: CloudRecord, client: CloudRecord, ancestor: CloudRecord?)
    /// The request holds more items than the backend accepts in one request; split it and try again.
    case limitExceeded(limit: Int, requested: Int)
    /// Some items of a request failed; each failure is keyed by its record ID.
    case partialFailure([CloudRecord.ID: CloudDatabaseError])
    /// The record's zone doesn't exist.
    case zoneNotFound(CloudRecord.ZoneID)
    /// A reference action refused the change: a `.validate` reference to a record that doesn't exist, or a
    /// delete of a record that a `.validate` reference still points to.
    case referenceViolation(CloudRecord.ID, reason: String)
    /// An item of an atomic request didn't fail itself but wasn't applied because another item failed.
    case batchRequestFailed(CloudRecord.ID)
    /// The request was malformed, for example a reference to a record in another zone.
    case invalidArguments(String)
    /// The client sent too many requests; wait `retryAfter` seconds before the next.
    case requestRateLimited(retryAfter: TimeInterval)
    /// The service is unavailable for now; try again after `retryAfter` seconds if given.
    case serviceUnavailable(retryAfter: TimeInterval?)
    /// The request couldn't reach the service or the connection dropped.
    case networkFailure(String)
    /// The user's storage quota is exhausted.
    case quotaExceeded
    /// The user isn't allowed to do this.
    case permissionFailure(String)
    /// The request needs an authenticated user.
    case notAuthenticated
    /// The backend failed in a way the client can't fix, such as an unreadable database file.
    case internalError(String)

    /// Whether trying the same request again later may succeed.
    public var isRetryable: Bool {
        switch self {
        case .requestRateLimited, .serviceUnavailable, .networkFailure: true
        default: false
        }
    }

    /// How many seconds to wait before trying again, when the service said.
    public var retryAfter: TimeInterval? {
        switch self {
        case .requestRateLimited(let retryAfter): retryAfter
        case .serviceUnavailable(let retryAfter): retryAfter
        default: nil
        }
    }

    /// The record the error is about, if it is about one.
    public var recordID: CloudRecord.ID? {
        switch self {
        case .unknownItem(let id), .referenceViolation(let id, _), .batchRequestFailed(let id): id
        case .serverRecordChanged(let server, _, _): server.id
        default: nil
        }
    }

    /// What went wrong and what to do about it.
    public var description: String {
        switch self {
        case .unknownItem(let id): "The record \(id) doesn't exist"
        case .serverRecordChanged(let server, _, _):
            "The record \(server.id) has changed on the server (change tag \(server.systemFields?.changeTag ?? "none")); fetch it, apply the change again and save"
        case .limitExceeded(let limit, let requested):
            "The request holds \(requested) items; the limit is \(limit): split it into smaller requests"
        case .partialFailure(let failures):
            "\(failures.count) items of the request failed: "
                + failures.sorted { $0.key.recordName < $1.key.recordName }.prefix(5)
                    .map { "\($0.key): \($0.value)" }.joined(separator: "; ")
        case .zoneNotFound(let zone): "The zone \(zone) doesn't exist: create it first"
        case .referenceViolation(let id, let reason): "The change to \(id) breaks a reference: \(reason)"
        case .batchRequestFailed(let id): "\(id) wasn't saved because another item of the atomic request failed"
        case .invalidArguments(let reason): "Invalid request: \(reason)"
        case .requestRateLimited(let retryAfter): "Too many requests: try again in \(retryAfter) seconds"
        case .serviceUnavailable(let retryAfter):
            "The service is unavailable" + (retryAfter.map { ": try again in \($0) seconds" } ?? "")
        case .networkFailure(let reason): "The network request failed: \(reason)"
        case .quotaExceeded: "The user's storage quota is exhausted"
        case .permissionFailure(let reason): "Not permitted: \(reason)"
        case .notAuthenticated: "The request needs an authenticated user"
        case .internalError(let reason): "The database failed: \(reason)"
        }
    }
}

extension CloudDatabaseError {
    /// The error of a request whose items failed: the one item's own error when only one failed on its own
    /// (the rest failing with ``batchRequestFailed(_:)`` because of it), otherwise ``partialFailure(_:)``.
    init(combining failures: [CloudRecord.ID: CloudDatabaseError]) {
        let causes = failures.values.filter { if case .batchRequestFailed = $0 { false } else { true } }
        if causes.count == 1, let cause = causes.first {
            self = cause
        } else {
            self = .partialFailure(failures)
        }
    }
}
