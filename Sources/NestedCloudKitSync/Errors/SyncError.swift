import NestedCloudKitCodable

/// Why a sync, or a call on a ``SyncStore``, failed. Local data and pending changes are always kept.
///
/// Match an error by its ``code``, or compare it with a value (`error == .closed`,
/// `error == .halted(.quotaExceeded)`); `catch SyncError.closed` works too. A later release may add codes, so a
/// `switch` over ``code`` needs a `default`. What the error is about is in its properties: ``recordID``,
/// ``zoneID``, ``databaseError``, ``haltReason``, ``reason``, and ``underlyingError``, the error underneath (SQLite's,
/// the file system's, a custom conflict policy's).
public struct SyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure an error is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: String, Sendable {
            case store, database, halted, invalidConfiguration, conflictPolicyFailed, unknownZone, closed
            case invalidQuery, invalidIndex, notFound, sharePermissionDenied, recordFromNewerVersion
        }

        fileprivate let value: Value

        /// See ``SyncError/store(_:)``.
        public static let store = Code(value: .store)
        /// See ``SyncError/database(_:)``.
        public static let database = Code(value: .database)
        /// See ``SyncError/halted(_:)``.
        public static let halted = Code(value: .halted)
        /// See ``SyncError/invalidConfiguration(_:)``.
        public static let invalidConfiguration = Code(value: .invalidConfiguration)
        /// See ``SyncError/conflictPolicyFailed(_:_:)``.
        public static let conflictPolicyFailed = Code(value: .conflictPolicyFailed)
        /// See ``SyncError/unknownZone(_:)``.
        public static let unknownZone = Code(value: .unknownZone)
        /// See ``SyncError/closed``.
        public static let closed = Code(value: .closed)
        /// See ``SyncError/invalidQuery(_:)``.
        public static let invalidQuery = Code(value: .invalidQuery)
        /// See ``SyncError/invalidIndex(_:)``.
        public static let invalidIndex = Code(value: .invalidIndex)
        /// See ``SyncError/notFound(_:)``.
        public static let notFound = Code(value: .notFound)
        /// See ``SyncError/sharePermissionDenied(_:_:)``.
        public static let sharePermissionDenied = Code(value: .sharePermissionDenied)
        /// See ``SyncError/recordFromNewerVersion(_:recordVersion:modelVersion:)``.
        public static let recordFromNewerVersion = Code(value: .recordFromNewerVersion)

        /// The code's name.
        public var description: String { value.rawValue }
    }

    /// What the error is, with what it is about. Private, so that a new kind breaks no app's `switch`.
    private enum Kind: Sendable, Hashable {
        case store(String)
        case database(CloudDatabaseError)
        case halted(SyncHaltReason)
        case invalidConfiguration(String)
        case conflictPolicyFailed(CloudRecord.ID, String)
        case unknownZone(CloudRecord.ZoneID)
        case closed
        case invalidQuery(String)
        case invalidIndex(String)
        case notFound(CloudRecord.ID)
        case sharePermissionDenied(CloudRecord.ID, String)
        case recordFromNewerVersion(CloudRecord.ID, recordVersion: Int, modelVersion: Int)
    }

    private let kind: Kind

    /// The error underneath, when there is one: SQLite's or the file system's for ``Code/store``, the policy's for
    /// ``Code/conflictPolicyFailed``. Two errors that differ only in it are equal.
    public let underlyingError: (any Error)?

    private init(_ kind: Kind, underlying: (any Error)? = nil) {
        self.kind = kind
        underlyingError = underlying
    }

    // MARK: The errors

    /// The local SQLite store failed: the file is unreadable, full or not a store.
    public static func store(_ reason: String) -> SyncError { SyncError(.store(reason)) }

    /// The local store failed because of `underlying`, which the error carries.
    static func store(_ reason: String, underlying: any Error) -> SyncError {
        SyncError(.store(reason), underlying: underlying)
    }

    /// The database kept failing after the retries the ``SyncConfiguration/retry`` policy allows, or failed in a
    /// way retrying can't fix; the next sync tries again.
    public static func database(_ error: CloudDatabaseError) -> SyncError { SyncError(.database(error)) }

    /// The sync stopped: retrying at once can't help until the user or the app does what the reason says. Pending
    /// changes are kept; the next sync tries again (after an account change with the `.pause` policy, only once
    /// the app decided).
    public static func halted(_ reason: SyncHaltReason) -> SyncError { SyncError(.halted(reason)) }

    /// The configuration can't work; the message says what to change.
    public static func invalidConfiguration(_ reason: String) -> SyncError {
        SyncError(.invalidConfiguration(reason))
    }

    /// A ``ConflictPolicy/custom(_:)`` policy threw while resolving the conflict on a record; the record stays
    /// as it is locally with its changes queued (and halted), listed in ``SyncStore/skippedRecords()`` until the app
    /// calls ``SyncStore/retryHaltedChanges()``.
    public static func conflictPolicyFailed(_ id: CloudRecord.ID, _ reason: String) -> SyncError {
        SyncError(.conflictPolicyFailed(id, reason))
    }

    /// The custom policy threw `underlying`, which the error carries.
    static func conflictPolicyFailed(_ id: CloudRecord.ID, underlying: any Error) -> SyncError {
        SyncError(.conflictPolicyFailed(id, String(describing: underlying)), underlying: underlying)
    }

    /// A call named a zone the store has nothing in: most often a `CloudRecord.ID` made without a zone, which is
    /// the default zone, not the store's.
    public static func unknownZone(_ zoneID: CloudRecord.ZoneID) -> SyncError { SyncError(.unknownZone(zoneID)) }

    /// The store or the engine was closed (``SyncStore/close()``, ``SyncEngine/close()``); open a new one.
    public static let closed = SyncError(.closed)

    /// A query can't run: a field named by a string that the model doesn't decode, a value a field can't be
    /// compared with, a negative limit. The message names the record type and the field, and says what to change.
    public static func invalidQuery(_ reason: String) -> SyncError { SyncError(.invalidQuery(reason)) }

    /// An index declaration can't be made into an index: no fields, or a field name that isn't one.
    public static func invalidIndex(_ reason: String) -> SyncError { SyncError(.invalidIndex(reason)) }

    /// ``SyncStore/update(_:id:in:_:)`` found no model with that ID.
    public static func notFound(_ id: CloudRecord.ID) -> SyncError { SyncError(.notFound(id)) }

    /// A change to a record another user shared with this one that their share doesn't allow: a read-only
    /// share, a new record outside the shared hierarchy, or a change to the share itself. Nothing was saved or
    /// queued; the message says why and what to do.
    public static func sharePermissionDenied(_ id: CloudRecord.ID, _ reason: String) -> SyncError {
        SyncError(.sharePermissionDenied(id, reason))
    }

    /// A save of a model over a record a newer version of its type wrote (`CloudRecord.schemaVersion` above the
    /// model's `cloudKitSchemaVersion`, which is 0 for a model that declares none): the record is kept as it is,
    /// since this version can't know what the newer one's fields mean. Nothing was saved or queued; the app should
    /// say the record needs a newer version.
    public static func recordFromNewerVersion(_ id: CloudRecord.ID, recordVersion: Int, modelVersion: Int)
        -> SyncError
    {
        SyncError(.recordFromNewerVersion(id, recordVersion: recordVersion, modelVersion: modelVersion))
    }

    // MARK: What it is about

    /// What kind of failure this is.
    public var code: Code {
        switch kind {
        case .store: .store
        case .database: .database
        case .halted: .halted
        case .invalidConfiguration: .invalidConfiguration
        case .conflictPolicyFailed: .conflictPolicyFailed
        case .unknownZone: .unknownZone
        case .closed: .closed
        case .invalidQuery: .invalidQuery
        case .invalidIndex: .invalidIndex
        case .notFound: .notFound
        case .sharePermissionDenied: .sharePermissionDenied
        case .recordFromNewerVersion: .recordFromNewerVersion
        }
    }

    /// The record the error is about: the conflict a custom policy failed on, the record an update didn't find,
    /// a change a share refused, a record a newer version wrote.
    public var recordID: CloudRecord.ID? {
        switch kind {
        case .conflictPolicyFailed(let id, _), .notFound(let id), .sharePermissionDenied(let id, _),
            .recordFromNewerVersion(let id, _, _):
            id
        default: nil
        }
    }

    /// The zone the store has nothing in, for ``Code/unknownZone``.
    public var zoneID: CloudRecord.ZoneID? {
        if case .unknownZone(let zoneID) = kind { return zoneID }
        return nil
    }

    /// The database's error, for ``Code/database``.
    public var databaseError: CloudDatabaseError? {
        if case .database(let error) = kind { return error }
        return nil
    }

    /// Why the sync halted, for ``Code/halted``.
    public var haltReason: SyncHaltReason? {
        if case .halted(let reason) = kind { return reason }
        return nil
    }

    /// What went wrong and what to change, in words, for the errors that carry a message: ``Code/store``,
    /// ``Code/invalidConfiguration``, ``Code/conflictPolicyFailed``, ``Code/invalidQuery``, ``Code/invalidIndex``
    /// and ``Code/sharePermissionDenied``.
    public var reason: String? {
        switch kind {
        case .store(let reason), .invalidConfiguration(let reason), .conflictPolicyFailed(_, let reason),
            .invalidQuery(let reason), .invalidIndex(let reason), .sharePermissionDenied(_, let reason):
            reason
        default: nil
        }
    }

    /// The versions of ``Code/recordFromNewerVersion``: the one that wrote the record, and the app model's.
    public var versions: (record: Int, model: Int)? {
        if case .recordFromNewerVersion(_, let record, let model) = kind { return (record, model) }
        return nil
    }

    /// What failed and what to do, in words.
    public var description: String {
        switch kind {
        case .store(let reason): "The local store failed: \(reason)"
        case .database(let error): "Sync failed: \(error)"
        case .halted(let reason): "Sync halted: \(reason)"
        case .invalidConfiguration(let reason): "Invalid sync configuration: \(reason)"
        case .conflictPolicyFailed(let id, let reason):
            "The custom conflict policy failed on \(id): \(reason); the local changes stay queued"
        case .unknownZone(let zoneID):
            "The store has nothing in the zone \(zoneID): a record ID made without a zone is in the default zone; "
                + "name the store's zone (CloudRecord.ID(recordName:zoneID: store.zoneID)) or delete by type and ID"
        case .closed:
            "The store or the sync engine is closed; open a new one"
        case .invalidQuery(let reason): "Invalid query: \(reason)"
        case .invalidIndex(let reason): "Invalid index declaration: \(reason)"
        case .notFound(let id): "The store has no record \(id) to update; save the model first"
        case .sharePermissionDenied(let id, let reason): "The share doesn't let this user change \(id): \(reason)"
        case .recordFromNewerVersion(let id, let recordVersion, let modelVersion):
            "\(id) was written by version \(recordVersion) of its model, newer than this app's "
                + (modelVersion == 0 ? "model, which declares no version (0)" : "version \(modelVersion)")
                + ": it is kept as it is; update the app to change it"
        }
    }

    // MARK: Comparing

    /// Whether two errors are the same failure of the same thing; their ``underlyingError``s aren't compared.
    public static func == (lhs: SyncError, rhs: SyncError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// Whether a thrown error is this one: `catch SyncError.closed`.
    public static func ~= (pattern: SyncError, error: any Error) -> Bool {
        (error as? SyncError) == pattern
    }
}

/// Why a sync halted, and what makes syncing work again.
public enum SyncHaltReason: Sendable, Hashable, CustomStringConvertible {
    /// The user's iCloud storage is full. Local changes stay queued; ask the user to free space or buy more.
    case quotaExceeded
    /// The server refused the request (a security role, a production schema that lacks a type or field).
    case permissionFailure(String)
    /// The request needs a signed-in user (CloudKit Web Services: a web auth token).
    case notAuthenticated
    /// The account can't be used now (no account, restricted, not yet ready).
    case accountUnavailable(CloudAccountStatus)
    /// Another user signed in, or the user signed out, and the ``SyncConfiguration/accountChangePolicy`` said to
    /// wait for the app: call ``SyncEngine/resetLocalStoreForCurrentAccount()`` or ``SyncEngine/adoptCurrentAccount()``.
    case accountChanged(previous: String?, current: String?)

    /// The reason, and what makes syncing work again, in words.
    public var description: String {
        switch self {
        case .quotaExceeded:
            "the user's iCloud storage is full; local changes stay queued until the user frees space"
        case .permissionFailure(let reason):
            "the server refused the request (\(reason)); check the container's security roles and deployed schema"
        case .notAuthenticated:
            "no user is signed in; sign the user in (Web Services: get a new web auth token) and sync again"
        case .accountUnavailable(let status):
            "the iCloud account is \(status); local changes stay queued until it is available"
        case .accountChanged(let previous, let current):
            "the account changed from \(previous ?? "no user") to \(current ?? "no user"); call "
                + "resetLocalStoreForCurrentAccount() to start over with the new account's data, or "
                + "adoptCurrentAccount() to keep the local data and upload it to the new account"
        }
    }
}
