import NestedCloudKitCodable

// The names logs give errors and decisions: their cases, without the values they carry, which may be a record's
// fields (a conflict's records) or words quoting them.

extension CloudDatabaseError {
    /// The error's code, for a log.
    var logCode: String { code.description }
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
