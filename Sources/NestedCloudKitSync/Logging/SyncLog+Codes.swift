import NestedCloudKitCodable

// The names logs give errors and decisions: their cases, without the values they carry, which may be a record's
// fields (a conflict's records) or words quoting them.

extension CloudDatabaseError {
    /// The error's case, for a log.
    var logCode: String {
        switch self {
        case .unknownItem: "unknownItem"
        case .serverRecordChanged: "serverRecordChanged"
        case .limitExceeded: "limitExceeded"
        case .partialFailure: "partialFailure"
        case .zoneNotFound: "zoneNotFound"
        case .userDeletedZone: "userDeletedZone"
        case .encryptedDataReset: "encryptedDataReset"
        case .changeTokenExpired: "changeTokenExpired"
        case .referenceViolation: "referenceViolation"
        case .batchRequestFailed: "batchRequestFailed"
        case .invalidArguments: "invalidArguments"
        case .requestRateLimited: "requestRateLimited"
        case .serviceUnavailable: "serviceUnavailable"
        case .networkFailure: "networkFailure"
        case .serverResponseLost: "serverResponseLost"
        case .accountTemporarilyUnavailable: "accountTemporarilyUnavailable"
        case .operationCancelled: "operationCancelled"
        case .quotaExceeded: "quotaExceeded"
        case .permissionFailure: "permissionFailure"
        case .notAuthenticated: "notAuthenticated"
        case .internalError: "internalError"
        }
    }
}

extension SyncError {
    /// The error's code, for a log; a database error's or a halt's own.
    var logCode: String {
        if let databaseError { return "database.\(databaseError.logCode)" }
        if let haltReason { return "halted.\(haltReason.logCode)" }
        return code.description
    }
}

extension SyncHaltReason {
    /// The reason's case, for a log.
    var logCode: String {
        switch self {
        case .quotaExceeded: "quotaExceeded"
        case .permissionFailure: "permissionFailure"
        case .notAuthenticated: "notAuthenticated"
        case .accountUnavailable(let status): "accountUnavailable.\(status.rawValue)"
        case .accountChanged: "accountChanged"
        }
    }
}

extension ConflictResolution.Decision {
    /// The decision's case, for a log.
    var logCode: String {
        switch self {
        case .keptServer: "keptServer"
        case .keptClient: "keptClient"
        case .merged: "merged"
        case .deletedWithServer: "deletedWithServer"
        case .recreatedFromClient: "recreatedFromClient"
        case .keptLocalDeletion: "keptLocalDeletion"
        case .restoredFromServer: "restoredFromServer"
        case .restoredForReference: "restoredForReference"
        case .deletedWithTarget: "deletedWithTarget"
        }
    }
}
