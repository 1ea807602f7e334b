import Foundation
import NestedCloudKitCodable

/// What a ``SyncEngine`` reports while it works, through ``SyncEngine/events()``.
public enum SyncEvent: Sendable, Hashable {
    /// A sync began.
    case syncStarted
    /// A sync ended; with the error that ended it, or `nil`.
    case syncFinished(SyncError?)
    /// Changes from the server were written to the local store: refresh what shows them.
    case fetchedChanges(SyncFetchedChanges)
    /// The server acknowledged local changes.
    case sentChanges(SyncSentChanges)
    /// A conflict was resolved by the configured policy.
    case conflictResolved(ConflictResolution)
    /// The server refused a change; `halted` if the engine stopped sending it until the app acts.
    case uploadFailed(CloudRecord.ID, CloudDatabaseError, halted: Bool)
    /// The server refused, for good, a change to a record another user shares with this one: the share no longer
    /// lets the user make it (made read-only, or narrowed, since the change was queued). The record was put back
    /// as the server has it (removed, if the server has none) and the change discarded; `discarded` is the record
    /// as the user had saved it (`nil` for a deletion), so the app can tell them what didn't reach the owner.
    case changeReverted(CloudRecord.ID, because: CloudDatabaseError, discarded: CloudRecord?)
    /// The app discarded a change the server didn't have (``SyncEngine/discardPendingChange(_:)``): the record was
    /// put back as the server has it (removed, if the server has none) and the change left the queue; `discarded`
    /// is the record as the user had saved it (`nil` for a deletion).
    case changeDiscarded(CloudRecord.ID, discarded: CloudRecord?)
    /// A record the server changed couldn't be applied: the server couldn't give it (a record this client can't
    /// read), or the conflict policy failed on it. The sync went on without it; the local copy stays, a pending
    /// change of it is halted, and it is listed in ``SyncStore/skippedRecords()`` until the app fixes the cause and
    /// calls ``SyncStore/retryHaltedChanges()``.
    case recordSkipped(CloudRecord.ID, reason: String)
    /// The signed-in user changed, and what the engine did about it.
    case accountChanged(previous: String?, current: String?, action: AccountChangeAction)
    /// A zone was deleted on the server, and what the engine did about it.
    case zoneDeleted(CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason, action: ZoneDeletionAction)
    /// The user lost access to a zone another user shared with them (removed from the share, the share deleted
    /// or stopped, or they left it): its records were deleted locally, with the changes queued for it, which can't
    /// reach its owner any more and are never uploaded anywhere else.
    case sharedZoneRemoved(CloudRecord.ZoneID, discardedChanges: Int)
    /// A change token expired: the zone (or, for `nil`, the database) is fetched in full and reconciled.
    case changeTokenExpired(CloudRecord.ZoneID?)
    /// A transient failure: the engine waits, then tries again.
    case retrying(after: Duration, because: CloudDatabaseError)
    /// The sync stopped for a reason retrying at once can't fix; pending changes are kept, and the reason says
    /// what makes syncing work again.
    case halted(SyncHaltReason)
}

/// The changes a fetch wrote to the local store.
public struct SyncFetchedChanges: Sendable, Hashable {
    /// The zone.
    public var zoneID: CloudRecord.ZoneID
    /// The records saved or updated locally.
    public var saved: [CloudRecord.ID]
    /// The records deleted locally.
    public var deleted: [CloudRecord.ID]

    /// Changes fetched into a zone; for tests and previews of an app's event handling.
    public init(zoneID: CloudRecord.ZoneID, saved: [CloudRecord.ID], deleted: [CloudRecord.ID]) {
        self.zoneID = zoneID
        self.saved = saved
        self.deleted = deleted
    }
}

/// The changes the server acknowledged in one request.
public struct SyncSentChanges: Sendable, Hashable {
    /// The records saved.
    public var saved: [CloudRecord.ID]
    /// The records deleted.
    public var deleted: [CloudRecord.ID]

    /// Changes the server acknowledged; for tests and previews of an app's event handling.
    public init(saved: [CloudRecord.ID], deleted: [CloudRecord.ID]) {
        self.saved = saved
        self.deleted = deleted
    }
}

/// What the engine did when the user changed.
public enum AccountChangeAction: String, Sendable, Hashable {
    /// The local data of the previous user was deleted.
    case resetLocalStore
    /// Syncing stopped until the app decides.
    case paused
    /// The local data was kept and will be uploaded to the new account (``SyncEngine/adoptCurrentAccount()``).
    case adopted
}

/// What the engine did when a zone was deleted on the server.
public enum ZoneDeletionAction: String, Sendable, Hashable {
    /// The zone was created again and the local records queued for upload.
    case recreated
    /// The local records of the zone were deleted too.
    case deletedLocalData
}

/// A snapshot of the engine's state, for a status line or a debug screen.
public struct SyncStatus: Sendable, Hashable {
    /// Changes not yet on the server, halted ones included.
    public var pendingChanges: Int
    /// Changes the engine stopped sending until the app acts.
    public var haltedChanges: Int
    /// When a sync last finished without an error.
    public var lastSuccessfulSync: Date?
    /// The error that ended the last sync, if it failed.
    public var lastError: SyncError?
    /// Whether a sync is running.
    public var isSyncing: Bool
    /// Why the engine is paused, if it is.
    public var pausedReason: SyncHaltReason?
    /// Records the server changed that a fetch couldn't apply (``SyncStore/skippedRecords()``).
    public var skippedRecords: Int
    /// The user's iCloud account at the engine's last check (each sync checks it, unless
    /// ``SyncConfiguration/checksAccount`` is off); `nil` before the first.
    public var accountStatus: CloudAccountStatus?

    /// A status; for tests and previews of an app's status display.
    public init(
        pendingChanges: Int, haltedChanges: Int, lastSuccessfulSync: Date?, lastError: SyncError?, isSyncing: Bool,
        pausedReason: SyncHaltReason?, skippedRecords: Int = 0, accountStatus: CloudAccountStatus? = nil
    ) {
        self.skippedRecords = skippedRecords
        self.accountStatus = accountStatus
        self.pendingChanges = pendingChanges
        self.haltedChanges = haltedChanges
        self.lastSuccessfulSync = lastSuccessfulSync
        self.lastError = lastError
        self.isSyncing = isSyncing
        self.pausedReason = pausedReason
    }
}
