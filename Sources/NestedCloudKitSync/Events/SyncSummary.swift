import NestedCloudKitCodable

/// What one sync did, as ``SyncEngine/sync(complete:)`` returns it: the events it reported, in order, and what
/// they add up to.
///
/// When `sync()` returns, each of these events has also been given to every stream of ``SyncEngine/events()`` (a
/// reader in another task may not have read it yet); the summary is the way to act on a sync's outcome right after
/// it, without waiting for a stream.
///
/// The pages of changes (``SyncEvent/fetchedChanges(_:)`` and ``SyncEvent/sentChanges(_:)``, each listing the
/// records of a page) are counted here, not kept: an initial sync of a large zone would otherwise hold every record
/// ID it fetched until it returned, 50 bytes a record. Their IDs reach the streams of ``SyncEngine/events()`` page
/// by page, as they happen; an app that needs them reads them there.
public struct SyncSummary: Sendable, Hashable {
    /// Every event of the sync, from ``SyncEvent/syncStarted`` to ``SyncEvent/syncFinished(_:)``, but the pages of
    /// changes, which ``fetchedRecordCount``, ``deletedRecordCount``, ``sentSaveCount``, ``sentDeletionCount`` and
    /// ``changedZones`` count.
    public var events: [SyncEvent]
    /// The records fetched from the server and saved locally.
    public var fetchedRecordCount = 0
    /// The records the server deleted, deleted locally.
    public var deletedRecordCount = 0
    /// The local saves the server acknowledged.
    public var sentSaveCount = 0
    /// The local deletions the server acknowledged.
    public var sentDeletionCount = 0
    /// The zones in which the sync fetched changes.
    public var changedZones: Set<CloudRecord.ZoneID> = []

    /// A summary of these events, pages of changes counted; for tests and previews of an app's handling.
    public init(events: [SyncEvent]) {
        self.events = []
        for event in events { record(event) }
    }

    /// Adds an event: a page of changes to the counts, any other to ``events``.
    mutating func record(_ event: SyncEvent) {
        switch event {
        case .fetchedChanges(let changes):
            fetchedRecordCount += changes.saved.count
            deletedRecordCount += changes.deleted.count
            if !changes.saved.isEmpty || !changes.deleted.isEmpty { changedZones.insert(changes.zoneID) }
        case .sentChanges(let sent):
            sentSaveCount += sent.saved.count
            sentDeletionCount += sent.deleted.count
        default:
            events.append(event)
        }
    }

    /// Whether the sync brought or sent any change.
    public var changedAnything: Bool {
        fetchedRecordCount + deletedRecordCount + sentSaveCount + sentDeletionCount > 0
    }

    /// Every conflict, with what the policy decided.
    public var resolutions: [ConflictResolution] {
        events.compactMap { if case .conflictResolved(let resolution) = $0 { resolution } else { nil } }
    }

    /// The changes the server refused, each once: those it may take later (``SyncStore/pendingChanges()`` says
    /// which are halted) and those discarded for good (``revertedChanges``).
    public var refusedChanges: [CloudRecord.ID] {
        var ids: [CloudRecord.ID] = []
        for event in events {
            switch event {
            case .uploadFailed(let id, _, _), .changeReverted(let id, _, _): if !ids.contains(id) { ids.append(id) }
            default: continue
            }
        }
        return ids
    }

    /// The changes to others' shared records that their shares no longer allowed: discarded, with the server's
    /// copy put back (``SyncEvent/changeReverted(_:because:discarded:)``).
    public var revertedChanges: [CloudRecord.ID] {
        events.compactMap { if case .changeReverted(let id, _, _) = $0 { id } else { nil } }
    }

    /// The records a fetch couldn't apply (``SyncEvent/recordSkipped(_:reason:)``).
    public var skippedRecordIDs: [CloudRecord.ID] {
        events.compactMap { if case .recordSkipped(let id, _) = $0 { id } else { nil } }
    }
}
