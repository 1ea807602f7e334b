import NestedCloudKitCodable

/// Where a running sync is: its phase, the pages and records it has fetched, the changes it has sent and those
/// still queued, for a progress bar or a status line (``SyncEngine/progress()``, ``ObservedSyncState/progress``).
///
/// The pages, records and changes sent only grow during a sync. The engine publishes an update when the phase
/// changes and once per page fetched or batch sent, never per record: about two updates per page, however many
/// records a page holds.
///
/// How much is left is known only while sending: CloudKit's change feeds say whether more pages are coming, never
/// how many, so ``fractionCompleted`` is `nil` until the sync sends, and a view shows an indeterminate bar before.
public struct SyncProgress: Sendable, Hashable {
    /// What a sync does, in the order it does it; ``resolving`` and ``applying`` come back between pages and batches.
    public enum Phase: String, Sendable, Hashable, CaseIterable {
        /// Checking the signed-in user (``SyncConfiguration/checksAccount``).
        case account
        /// Creating the synced zones and the subscription, where the server doesn't have them yet.
        case zones
        /// Asking the server for changes: the database's, then each changed zone's, page by page.
        case fetching
        /// Writing a fetched page into the store.
        case applying
        /// Sending the queued local changes, batch by batch.
        case sending
        /// Resolving conflicts by the ``SyncConfiguration/conflictPolicy``: a fetched record that met a local
        /// change, or a change the server refused because its copy changed.
        case resolving
        /// The sync ended; ``SyncEngine/sync(complete:)`` returns or throws next.
        case finished
    }

    /// What the sync does now.
    public var phase: Phase
    /// The zone it fetches or applies, while it fetches or applies one; `nil` otherwise.
    public var zoneID: CloudRecord.ZoneID?
    /// Pages of changes fetched so far in this sync, from every zone.
    public var pagesFetched: Int
    /// Records and deletions fetched so far in this sync: what the server sent, before the store applied it.
    public var recordsFetched: Int
    /// Whether the server said more pages of the zone being fetched are coming.
    public var moreComing: Bool
    /// Changes the server acknowledged so far in this sync.
    public var changesSent: Int
    /// Changes still queued to send, halted ones not counted (they wait for the app): counted when sending starts
    /// and after each batch, so a change the user saves during the sync counts too; `nil` before sending starts.
    public var changesQueued: Int?

    /// A progress at the start of a sync.
    ///
    /// - Parameter phase: The first phase.
    package init(phase: Phase) {
        self.init(
            phase: phase, zoneID: nil, pagesFetched: 0, recordsFetched: 0, moreComing: false, changesSent: 0,
            changesQueued: nil)
    }

    /// A progress with every count; for tests and previews of an app's progress display.
    public init(
        phase: Phase, zoneID: CloudRecord.ZoneID?, pagesFetched: Int, recordsFetched: Int, moreComing: Bool,
        changesSent: Int, changesQueued: Int?
    ) {
        self.phase = phase
        self.zoneID = zoneID
        self.pagesFetched = pagesFetched
        self.recordsFetched = recordsFetched
        self.moreComing = moreComing
        self.changesSent = changesSent
        self.changesQueued = changesQueued
    }

    /// The share of the sync done, from 0 to 1, where it can be known: the changes sent out of those sent and
    /// still queued, once the sync sends (1 when it has nothing to send). `nil` before (and for a sync that ended
    /// before sending): how many records are left to fetch is something CloudKit doesn't say. A change the user saves while the sync sends adds to the queue, so
    /// the fraction can step back.
    public var fractionCompleted: Double? {
        guard let changesQueued else { return nil }
        let total = changesSent + changesQueued
        return total == 0 ? 1 : Double(changesSent) / Double(total)
    }
}
