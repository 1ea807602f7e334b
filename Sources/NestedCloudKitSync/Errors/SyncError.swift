import NestedCloudKitCodable

/// Why a sync, or a call on a ``SyncStore``, failed. Local data and pending changes are always kept.
public enum SyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The local SQLite store failed: the file is unreadable, full or not a store.
    case store(String)
    /// The database kept failing after the retries the ``SyncConfiguration/retry`` policy allows, or failed in a
    /// way retrying can't fix; the next sync tries again.
    case database(CloudDatabaseError)
    /// The sync stopped: retrying at once can't help until the user or the app does what the reason says. Pending
    /// changes are kept; the next sync tries again (after an account change with the `.pause` policy, only once
    /// the app decided).
    case halted(SyncHaltReason)
    /// The configuration can't work; the message says what to change.
    case invalidConfiguration(String)
    /// A ``ConflictPolicy/custom(_:)`` policy threw while resolving the conflict on a record; the record stays
    /// as it is locally with its changes queued (and halted), listed in ``SyncStore/skippedRecords()`` until the app
    /// calls ``SyncStore/retryHaltedChanges()``.
    case conflictPolicyFailed(CloudRecord.ID, String)
    /// A call named a zone the store has nothing in: most often a `CloudRecord.ID` made without a zone, which is
    /// the default zone, not the store's.
    case unknownZone(CloudRecord.ZoneID)
    /// The store or the engine was closed (``SyncStore/close()``, ``SyncEngine/close()``); open a new one.
    case closed
    /// A query can't run: a field named by a string that the model doesn't decode, a value a field can't be
    /// compared with, a negative limit. The message names the record type and the field, and says what to change.
    case invalidQuery(String)
    /// An index declaration can't be made into an index: no fields, or a field name that isn't one.
    case invalidIndex(String)
    /// ``SyncStore/update(_:id:in:_:)`` found no model with that ID.
    case notFound(CloudRecord.ID)
    /// A change to a record another user shared with this one that their share doesn't allow: a read-only
    /// share, a new record outside the shared hierarchy, or a change to the share itself. Nothing was saved or
    /// queued; the message says why and what to do.
    case sharePermissionDenied(CloudRecord.ID, String)
    /// A save of a model over a record a newer version of its type wrote (`CloudRecord.schemaVersion` above the
    /// model's `cloudKitSchemaVersion`, which is 0 for a model that declares none): the record is kept as it is, since this version can't know what the newer
    /// one's fields mean. Nothing was saved or queued; the app should say the record needs a newer version.
    case recordFromNewerVersion(CloudRecord.ID, recordVersion: Int, modelVersion: Int)

    /// What failed and what to do, in words.
    public var description: String {
        switch self {
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
