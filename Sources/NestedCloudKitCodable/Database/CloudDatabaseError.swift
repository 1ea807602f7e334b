import Foundation

/// An error from a ``CloudDatabase``, modelled on CloudKit's `CKError` codes so that code written against one
/// backend handles the others' failures the same way.
///
/// Errors about one record of a request come back in that record's `Result`; errors about the whole request are
/// thrown. ``isRetryable`` and ``retryAfter`` say whether and when to try again; ``recordID`` and ``zoneID`` say
/// what the error is about.
///
/// Cancelling the task that runs a request ends it with Swift's `CancellationError`, as Swift's own APIs do, not
/// with a `CloudDatabaseError`; ``operationCancelled`` is for an item whose operation was cancelled some other way.
public enum CloudDatabaseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The record doesn't exist (or no longer does).
    case unknownItem(CloudRecord.ID)
    /// The server's record has changed since the client's copy was fetched (`ifServerRecordUnchanged`), or a
    /// record being created already exists. Carries the server's record, the client's record and, when the server
    /// still knows it, the version the client's copy came from.
    case serverRecordChanged(server: CloudRecord, client: CloudRecord, ancestor: CloudRecord?)
    /// The request is larger than the backend accepts in one request; split it and try again.
    ///
    /// `limit` is the most items the backend takes, and `requested` the items the request held, where they are
    /// known: CloudKit's framework names neither (its limit also counts bytes), so its error may carry only the
    /// request's size, or nothing for one record that is too large.
    case limitExceeded(limit: Int?, requested: Int?)
    /// Some items of a request failed; each failure is keyed by its record ID.
    case partialFailure([CloudRecord.ID: CloudDatabaseError])
    /// The zone doesn't exist: create it first.
    case zoneNotFound(CloudRecord.ZoneID)
    /// The user deleted the zone, and with it the app's data in it, in iCloud's settings. Don't recreate it or
    /// upload the data again without asking: the user chose to remove it. Delete the local copy, or ask.
    case userDeletedZone(CloudRecord.ZoneID)
    /// The zone was deleted because the user reset their account's encrypted data (during account recovery).
    /// The user still wants the data: create the zone again and upload what this device keeps of it.
    case encryptedDataReset(CloudRecord.ZoneID)
    /// The change token is too old or unknown to the server: fetch the changes again from the beginning (a `nil`
    /// token), keeping local changes that were never uploaded. Names the zone, for a zone's token.
    case changeTokenExpired(CloudRecord.ZoneID?)
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
    /// The request couldn't reach the service or the connection dropped before it was sent.
    case networkFailure(String)
    /// The connection dropped after the request was sent, so it may or may not have been applied. Try again:
    /// a save that did apply comes back as ``serverRecordChanged(server:client:ancestor:)`` or, for a record
    /// being created, with the record already there.
    case serverResponseLost
    /// The user's iCloud account is signed in but not ready yet (for example while it is being set up). Keep the
    /// local data, send nothing more, and try again once the account becomes available.
    case accountTemporarilyUnavailable
    /// The operation was cancelled before it finished, by something other than the task that ran it. Some of
    /// its changes may have been applied: fetch the records to find out.
    case operationCancelled
    /// The user's storage quota is exhausted.
    case quotaExceeded
    /// The user isn't allowed to do this.
    case permissionFailure(String)
    /// The request needs an authenticated user.
    case notAuthenticated
    /// The backend failed in a way the client can't fix, such as an unreadable database file.
    case internalError(String)

    /// Whether trying the same request again later may succeed: throttling, an unavailable service, a network
    /// failure, a lost response and an account that isn't ready yet.
    public var isRetryable: Bool {
        switch self {
        case .requestRateLimited, .serviceUnavailable, .networkFailure, .serverResponseLost,
            .accountTemporarilyUnavailable:
            true
        default:
            false
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

    /// The zone the error is about: the zone it names, or the zone of the record it is about.
    public var zoneID: CloudRecord.ZoneID? {
        switch self {
        case .zoneNotFound(let zone), .userDeletedZone(let zone), .encryptedDataReset(let zone): zone
        case .changeTokenExpired(let zone): zone
        default: recordID?.zoneID
        }
    }

    /// What went wrong and what to do about it.
    public var description: String {
        switch self {
        case .unknownItem(let id): "The record \(id) doesn't exist"
        case .serverRecordChanged(let server, _, _):
            "The record \(server.id) has changed on the server (change tag \(server.systemFields?.changeTag ?? "none")); fetch it, apply the change again and save"
        case .limitExceeded(let limit?, let requested?):
            "The request holds \(requested) items; the limit is \(limit): split it into smaller requests"
        case .limitExceeded(nil, let requested?):
            "The request of \(requested) items is larger than the service accepts: split it into smaller requests"
        case .limitExceeded(let limit?, nil):
            "The request holds more than the limit of \(limit) items: split it into smaller requests"
        case .limitExceeded(nil, nil):
            "The request, or a record in it, is larger than the service accepts: split the request, or make the record smaller (move large values to assets)"
        case .partialFailure(let failures):
            "\(failures.count) items of the request failed: "
                + failures.sorted { $0.key.recordName < $1.key.recordName }.prefix(5)
                .map { "\($0.key): \($0.value)" }.joined(separator: "; ")
        case .zoneNotFound(let zone) where zone.ownerName != CloudRecord.ZoneID.currentUserOwnerName:
            "The zone \(zone) isn't shared with this user, or doesn't exist: another user's zone is reached only "
                + "through a share its owner made and this user accepted"
        case .zoneNotFound(let zone): "The zone \(zone) doesn't exist: create it first"
        case .userDeletedZone(let zone):
            "The user deleted the zone \(zone) and its data in iCloud's settings: don't recreate it or upload the data again without asking the user"
        case .encryptedDataReset(let zone):
            "The zone \(zone) was deleted because the user reset their encrypted data: create it again and upload the data this device keeps"
        case .changeTokenExpired(let zone):
            "The change token" + (zone.map { " of the zone \($0)" } ?? "")
                + " has expired: fetch all changes again from a nil token, keeping local changes not yet uploaded"
        case .referenceViolation(let id, let reason): "The change to \(id) breaks a reference: \(reason)"
        case .batchRequestFailed(let id): "\(id) wasn't saved because another item of the atomic request failed"
        case .invalidArguments(let reason): "Invalid request: \(reason)"
        case .requestRateLimited(let retryAfter): "Too many requests: try again in \(retryAfter) seconds"
        case .serviceUnavailable(let retryAfter):
            "The service is unavailable" + (retryAfter.map { ": try again in \($0) seconds" } ?? "")
        case .networkFailure(let reason): "The network request failed: \(reason)"
        case .serverResponseLost:
            "The connection dropped before the service answered; the request may have been applied: try again"
        case .accountTemporarilyUnavailable:
            "The user's iCloud account isn't ready yet: keep local data and try again once the account is available"
        case .operationCancelled:
            "The operation was cancelled before it finished; some of its changes may have been applied: fetch the records to find out"
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
