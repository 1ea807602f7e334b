import Foundation

extension CloudDatabaseError {
    /// Every error a database reports, with what it is about. Package-wide, so that the package's own code
    /// switches over it exhaustively; apps match ``CloudDatabaseError/code``. Each case is documented at the
    /// ``CloudDatabaseError`` constructor of its name.
    package enum Kind: Sendable, Hashable {
        case unknownItem(CloudRecord.ID)
        case serverRecordChanged(server: CloudRecord, client: CloudRecord, ancestor: CloudRecord?)
        case limitExceeded(limit: Int?, requested: Int?)
        case partialFailure([CloudRecord.ID: CloudDatabaseError])
        case zoneNotFound(CloudRecord.ZoneID)
        case userDeletedZone(CloudRecord.ZoneID)
        case encryptedDataReset(CloudRecord.ZoneID)
        case changeTokenExpired(CloudRecord.ZoneID?)
        case referenceViolation(CloudRecord.ID, reason: String)
        case batchRequestFailed(CloudRecord.ID)
        case invalidArguments(String)
        case requestRateLimited(retryAfter: TimeInterval)
        case serviceUnavailable(retryAfter: TimeInterval?)
        case networkFailure(String)
        case serverResponseLost
        case accountTemporarilyUnavailable
        case operationCancelled
        case quotaExceeded
        case permissionFailure(String)
        case notAuthenticated
        case internalError(String)
    }

    /// What kind of failure this is.
    public var code: Code {
        switch kind {
        case .unknownItem: .unknownItem
        case .serverRecordChanged: .serverRecordChanged
        case .limitExceeded: .limitExceeded
        case .partialFailure: .partialFailure
        case .zoneNotFound: .zoneNotFound
        case .userDeletedZone: .userDeletedZone
        case .encryptedDataReset: .encryptedDataReset
        case .changeTokenExpired: .changeTokenExpired
        case .referenceViolation: .referenceViolation
        case .batchRequestFailed: .batchRequestFailed
        case .invalidArguments: .invalidArguments
        case .requestRateLimited: .requestRateLimited
        case .serviceUnavailable: .serviceUnavailable
        case .networkFailure: .networkFailure
        case .serverResponseLost: .serverResponseLost
        case .accountTemporarilyUnavailable: .accountTemporarilyUnavailable
        case .operationCancelled: .operationCancelled
        case .quotaExceeded: .quotaExceeded
        case .permissionFailure: .permissionFailure
        case .notAuthenticated: .notAuthenticated
        case .internalError: .internalError
        }
    }

    /// Whether trying the same request again later may succeed: throttling, an unavailable service, a network
    /// failure, a lost response and an account that isn't ready yet.
    public var isRetryable: Bool {
        switch kind {
        case .requestRateLimited, .serviceUnavailable, .networkFailure, .serverResponseLost,
            .accountTemporarilyUnavailable:
            true
        default:
            false
        }
    }

    /// How many seconds to wait before trying again, when the service said.
    public var retryAfter: TimeInterval? {
        switch kind {
        case .requestRateLimited(let retryAfter): retryAfter
        case .serviceUnavailable(let retryAfter): retryAfter
        default: nil
        }
    }

    /// The record the error is about, if it is about one.
    public var recordID: CloudRecord.ID? {
        switch kind {
        case .unknownItem(let id), .referenceViolation(let id, _), .batchRequestFailed(let id): id
        case .serverRecordChanged(let server, _, _): server.id
        default: nil
        }
    }

    /// The zone the error is about: the zone it names, or the zone of the record it is about.
    public var zoneID: CloudRecord.ZoneID? {
        switch kind {
        case .zoneNotFound(let zone), .userDeletedZone(let zone), .encryptedDataReset(let zone): zone
        case .changeTokenExpired(let zone): zone
        default: recordID?.zoneID
        }
    }

    /// The records of a ``Code/serverRecordChanged``: the server's, the client's, and the version the client's
    /// copy came from when the server still knows it.
    public var conflict: (server: CloudRecord, client: CloudRecord, ancestor: CloudRecord?)? {
        if case .serverRecordChanged(let server, let client, let ancestor) = kind { return (server, client, ancestor) }
        return nil
    }

    /// The most items the backend takes and the items the request held, for a ``Code/limitExceeded``, where they
    /// are known (CloudKit's framework names neither).
    public var limits: (limit: Int?, requested: Int?)? {
        if case .limitExceeded(let limit, let requested) = kind { return (limit, requested) }
        return nil
    }

    /// The failure of each item, for a ``Code/partialFailure``.
    public var partialFailures: [CloudRecord.ID: CloudDatabaseError]? {
        if case .partialFailure(let failures) = kind { return failures }
        return nil
    }

    /// The words the error carries, for the codes that have them: ``Code/invalidArguments``,
    /// ``Code/permissionFailure``, ``Code/networkFailure``, ``Code/internalError`` and ``Code/referenceViolation``.
    public var reason: String? {
        switch kind {
        case .invalidArguments(let reason), .permissionFailure(let reason), .networkFailure(let reason),
            .internalError(let reason), .referenceViolation(_, let reason):
            reason
        default: nil
        }
    }

    /// What went wrong and what to do about it.
    public var description: String {
        switch kind {

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

extension Result where Failure == CloudDatabaseError {
    /// What the failure is, for the package's own matching of an item's result; `nil` for a success.
    package var failureKind: CloudDatabaseError.Kind? {
        if case .failure(let error) = self { return error.kind }
        return nil
    }
}
