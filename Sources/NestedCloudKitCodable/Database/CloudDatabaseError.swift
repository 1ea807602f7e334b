import Foundation

/// An error from a ``CloudDatabase``, modelled on CloudKit's `CKError` codes so that code written against one
/// backend handles the others' failures the same way.
///
/// Errors about one record of a request come back in that record's `Result`; errors about the whole request are
/// thrown. Match an error by its ``code`` (a later release may add codes, so a `switch` over it needs a
/// `default`), or compare it with a value: `error == .serverResponseLost`, `catch CloudDatabaseError.quotaExceeded`.
/// ``isRetryable`` and ``retryAfter`` say whether and when to try again; ``recordID`` and ``zoneID`` what the error
/// is about, ``conflict`` the records of a ``Code/serverRecordChanged``, and ``underlyingError`` the error
/// underneath (the network's, SQLite's), when there is one.
///
/// Cancelling the task that runs a request ends it with Swift's `CancellationError`, as Swift's own APIs do, not
/// with a `CloudDatabaseError`; ``operationCancelled`` is for an item whose operation was cancelled some other way.
public struct CloudDatabaseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What the error is, with what it is about: the package's own code switches over it, and apps over ``code``,
    /// so that a new kind breaks no app's `switch`.
    package let kind: Kind

    /// The error underneath, when there is one: the network's for ``Code/networkFailure``, the storage's for
    /// ``Code/internalError``. Two errors that differ only in it are equal.
    public let underlyingError: (any Error)?

    package init(_ kind: Kind, underlying: (any Error)? = nil) {
        self.kind = kind
        underlyingError = underlying
    }

    // MARK: The errors

    /// The record doesn't exist (or no longer does).
    public static func unknownItem(_ id: CloudRecord.ID) -> CloudDatabaseError { .init(.unknownItem(id)) }

    /// The server's record has changed since the client's copy was fetched (`ifServerRecordUnchanged`), or a
    /// record being created already exists. Carries the server's record, the client's record and, when the server
    /// still knows it, the version the client's copy came from (``conflict``).
    public static func serverRecordChanged(server: CloudRecord, client: CloudRecord, ancestor: CloudRecord?)
        -> CloudDatabaseError
    {
        .init(.serverRecordChanged(server: server, client: client, ancestor: ancestor))
    }

    /// The request is larger than the backend accepts in one request; split it and try again.
    ///
    /// `limit` is the most items the backend takes, and `requested` the items the request held, where they are
    /// known: CloudKit's framework names neither (its limit also counts bytes), so its error may carry only the
    /// request's size, or nothing for one record that is too large.
    public static func limitExceeded(limit: Int?, requested: Int?) -> CloudDatabaseError {
        .init(.limitExceeded(limit: limit, requested: requested))
    }

    /// Some items of a request failed; each failure is keyed by its record ID (``partialFailures``).
    public static func partialFailure(_ failures: [CloudRecord.ID: CloudDatabaseError]) -> CloudDatabaseError {
        .init(.partialFailure(failures))
    }

    /// The zone doesn't exist: create it first.
    public static func zoneNotFound(_ zoneID: CloudRecord.ZoneID) -> CloudDatabaseError { .init(.zoneNotFound(zoneID)) }

    /// The user deleted the zone, and with it the app's data in it, in iCloud's settings. Don't recreate it or
    /// upload the data again without asking: the user chose to remove it. Delete the local copy, or ask.
    public static func userDeletedZone(_ zoneID: CloudRecord.ZoneID) -> CloudDatabaseError {
        .init(.userDeletedZone(zoneID))
    }

    /// The zone was deleted because the user reset their account's encrypted data (during account recovery).
    /// The user still wants the data: create the zone again and upload what this device keeps of it.
    public static func encryptedDataReset(_ zoneID: CloudRecord.ZoneID) -> CloudDatabaseError {
        .init(.encryptedDataReset(zoneID))
    }

    /// The change token is too old or unknown to the server: fetch the changes again from the beginning (a `nil`
    /// token), keeping local changes that were never uploaded. Names the zone, for a zone's token.
    public static func changeTokenExpired(_ zoneID: CloudRecord.ZoneID?) -> CloudDatabaseError {
        .init(.changeTokenExpired(zoneID))
    }

    /// A reference action refused the change: a `.validate` reference to a record that doesn't exist, or a
    /// delete of a record that a `.validate` reference still points to.
    public static func referenceViolation(_ id: CloudRecord.ID, reason: String) -> CloudDatabaseError {
        .init(.referenceViolation(id, reason: reason))
    }

    /// An item of an atomic request didn't fail itself but wasn't applied because another item failed.
    public static func batchRequestFailed(_ id: CloudRecord.ID) -> CloudDatabaseError { .init(.batchRequestFailed(id)) }

    /// The request was malformed, for example a reference to a record in another zone.
    public static func invalidArguments(_ reason: String) -> CloudDatabaseError { .init(.invalidArguments(reason)) }

    /// The client sent too many requests; wait `retryAfter` seconds before the next.
    public static func requestRateLimited(retryAfter: TimeInterval) -> CloudDatabaseError {
        .init(.requestRateLimited(retryAfter: retryAfter))
    }

    /// The service is unavailable for now; try again after `retryAfter` seconds if given.
    public static func serviceUnavailable(retryAfter: TimeInterval?) -> CloudDatabaseError {
        .init(.serviceUnavailable(retryAfter: retryAfter))
    }

    /// The request couldn't reach the service or the connection dropped before it was sent.
    public static func networkFailure(_ reason: String) -> CloudDatabaseError { .init(.networkFailure(reason)) }

    /// The request couldn't reach the service because of `underlying` (the HTTP client's error), which the error
    /// carries.
    package static func networkFailure(_ reason: String, underlying: any Error) -> CloudDatabaseError {
        .init(.networkFailure(reason), underlying: underlying)
    }

    /// The connection dropped after the request was sent, so it may or may not have been applied. Try again:
    /// a save that did apply comes back as ``serverRecordChanged(server:client:ancestor:)`` or, for a record
    /// being created, with the record already there.
    public static let serverResponseLost = CloudDatabaseError(.serverResponseLost)

    /// The user's iCloud account is signed in but not ready yet (for example while it is being set up). Keep the
    /// local data, send nothing more, and try again once the account becomes available.
    public static let accountTemporarilyUnavailable = CloudDatabaseError(.accountTemporarilyUnavailable)

    /// The operation was cancelled before it finished, by something other than the task that ran it. Some of
    /// its changes may have been applied: fetch the records to find out.
    public static let operationCancelled = CloudDatabaseError(.operationCancelled)

    /// The user's storage quota is exhausted.
    public static let quotaExceeded = CloudDatabaseError(.quotaExceeded)

    /// The user isn't allowed to do this.
    public static func permissionFailure(_ reason: String) -> CloudDatabaseError { .init(.permissionFailure(reason)) }

    /// The request needs an authenticated user.
    public static let notAuthenticated = CloudDatabaseError(.notAuthenticated)

    /// The backend failed in a way the client can't fix, such as an unreadable database file.
    public static func internalError(_ reason: String) -> CloudDatabaseError { .init(.internalError(reason)) }

    /// The backend failed because of `underlying` (the storage's error), which the error carries.
    package static func internalError(_ reason: String, underlying: any Error) -> CloudDatabaseError {
        .init(.internalError(reason), underlying: underlying)
    }

    // MARK: Comparing

    /// Whether two errors are the same failure of the same thing; their ``underlyingError``s aren't compared.
    public static func == (lhs: CloudDatabaseError, rhs: CloudDatabaseError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// Whether a thrown error is this one: `catch CloudDatabaseError.serverResponseLost`.
    public static func ~= (pattern: CloudDatabaseError, error: any Error) -> Bool {
        (error as? CloudDatabaseError) == pattern
    }
}

extension CloudDatabaseError {
    /// The error of a request whose items failed: the one item's own error when only one failed on its own
    /// (the rest failing with ``batchRequestFailed(_:)`` because of it), otherwise ``partialFailure(_:)``.
    init(combining failures: [CloudRecord.ID: CloudDatabaseError]) {
        let causes = failures.values.filter { $0.code != .batchRequestFailed }
        if causes.count == 1, let cause = causes.first {
            self = cause
        } else {
            self = .partialFailure(failures)
        }
    }
}
