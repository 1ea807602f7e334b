import NestedCloudKitCodable

/// What one sync did, as ``SyncEngine/sync(complete:)`` returns it: the events it reported, in order, and what
/// they add up to.
///
/// When `sync()` returns, each of these events has also been given to every stream of ``SyncEngine/events()`` (a
/// reader in another task may not have read it yet); the summary is the way to act on a sync's outcome right after
/// it, without waiting for a stream.
public struct SyncSummary: Sendable, Hashable {
    /// Every event of the sync, from ``SyncEvent/syncStarted`` to ``SyncEvent/syncFinished(_:)``.
    public var events: [SyncEvent]

    /// A summary of these events; for tests and previews of an app's handling.
    public init(events: [SyncEvent]) {
        self.events = events
    }

    /// The records fetched from the server and saved locally.
    public var fetchedRecordIDs: [CloudRecord.ID] {
        events.flatMap { event -> [CloudRecord.ID] in
            if case .fetchedChanges(let changes) = event { return changes.saved }
            return []
        }
    }

    /// The records the server deleted, deleted locally.
    public var deletedRecordIDs: [CloudRecord.ID] {
        events.flatMap { event -> [CloudRecord.ID] in
            if case .fetchedChanges(let changes) = event { return changes.deleted }
            return []
        }
    }

    /// The records whose saves the server acknowledged.
    public var sentSaves: [CloudRecord.ID] {
        events.flatMap { event -> [CloudRecord.ID] in
            if case .sentChanges(let sent) = event { return sent.saved }
            return []
        }
    }

    /// The records whose deletions the server acknowledged.
    public var sentDeletions: [CloudRecord.ID] {
        events.flatMap { event -> [CloudRecord.ID] in
            if case .sentChanges(let sent) = event { return sent.deleted }
            return []
        }
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
