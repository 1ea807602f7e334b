import Logging
import NestedCloudKitCodable

/// How a ``SyncEngine`` syncs: which zones, which policies, how it retries and when it syncs by itself.
public struct SyncConfiguration: Sendable {
    /// The zones to sync; the store's ``SyncStore/zoneID`` if empty.
    public var zones: [SyncZone]
    /// What wins when both sides changed a record.
    public var conflictPolicy: ConflictPolicy
    /// What wins when one side deleted a record the other changed.
    public var deleteConflictPolicy: DeleteConflictPolicy
    /// What happens to local data when another user signs in, or the user signs out.
    public var accountChangePolicy: AccountChangePolicy
    /// Asked when a synced zone was deleted on the server: keep the local copy and upload it again, or delete it
    /// too. By default (``ZoneDeletionResponse/default(for:)``) a zone the user purged in iCloud's settings is
    /// deleted locally, and one another device deleted or an encrypted-data reset emptied is uploaded again.
    public var zoneDeletionResponse: @Sendable (CloudZoneDeletion) async -> ZoneDeletionResponse
    /// How transient failures (rate limits, an unavailable service, the network, a lost response) are retried.
    public var retry: SyncRetryPolicy
    /// How many times in a row the server may refuse one change (a record too large, a broken reference) before
    /// the engine stops sending it and waits for the app (``PendingChange/isHalted``).
    public var maximumRecordFailures: Int
    /// In automatic mode, how long after a local save the engine syncs: the saves made meanwhile share that sync,
    /// and saving again doesn't postpone it.
    public var automaticSyncDelay: Duration
    /// In automatic mode, how often to sync without a push (Linux, Web Services); `nil` syncs only on saves and
    /// pushes.
    public var pollingInterval: Duration?
    /// The most changes one fetch request returns; the server's default if `nil`.
    public var fetchResultsLimit: Int?
    /// The ID of the database subscription the engine saves on its first sync so pushes arrive; `nil` saves none
    /// (the public database has no database subscriptions).
    public var subscriptionID: CloudSubscription.ID?
    /// Whether to check the user before each sync. Turn it off for the public database with a server-to-server
    /// key, which has no user.
    public var checksAccount: Bool
    /// Where the engine logs: a line per request at `debug`, per sync at `info`, `notice` and `warning` for what
    /// the app may have to act on (retries, halts, skips, resets), `error` for a change the server refused for
    /// good or a policy discarded. Record IDs, zones and error codes go in the metadata; field values never do
    /// (<doc:DiagnosingSync>). By default a logger labelled `NestedCloudKitSync` from the handler the app
    /// bootstrapped with `LoggingSystem.bootstrap` (swift-log's own default prints `info` and above to standard
    /// output).
    public var logger: Logger

    /// A configuration with the defaults: field-by-field merges, edits win over deletions, local data reset on an
    /// account change, five retries.
    public init(
        zones: [SyncZone] = [],
        conflictPolicy: ConflictPolicy = .fieldByField,
        deleteConflictPolicy: DeleteConflictPolicy = .editWins,
        accountChangePolicy: AccountChangePolicy = .resetLocalStore,
        zoneDeletionResponse: @escaping @Sendable (CloudZoneDeletion) async -> ZoneDeletionResponse =
            ZoneDeletionResponse.default(for:),
        retry: SyncRetryPolicy = SyncRetryPolicy(),
        maximumRecordFailures: Int = 3,
        automaticSyncDelay: Duration = .seconds(1),
        pollingInterval: Duration? = nil,
        fetchResultsLimit: Int? = nil,
        subscriptionID: CloudSubscription.ID? = "NestedCloudKitSync",
        checksAccount: Bool = true,
        logger: Logger = Logger(label: "NestedCloudKitSync")
    ) {
        self.zones = zones
        self.conflictPolicy = conflictPolicy
        self.deleteConflictPolicy = deleteConflictPolicy
        self.accountChangePolicy = accountChangePolicy
        self.zoneDeletionResponse = zoneDeletionResponse
        self.retry = retry
        self.maximumRecordFailures = maximumRecordFailures
        self.automaticSyncDelay = automaticSyncDelay
        self.pollingInterval = pollingInterval
        self.fetchResultsLimit = fetchResultsLimit
        self.subscriptionID = subscriptionID
        self.checksAccount = checksAccount
        self.logger = logger
    }
}

/// A zone the engine syncs.
public struct SyncZone: Sendable, Hashable {
    /// The zone.
    public var zoneID: CloudRecord.ZoneID
    /// For a zone without change tokens (the default zone, the public database): the record types to fetch by
    /// modification date. Custom zones ignore it.
    public var recordTypes: [String]
    /// For a zone without change tokens: how often to compare the full set of record names with the local one,
    /// to find records deleted on the server (a fetch by date can't see deletions).
    public var fullCheckInterval: Duration

    /// A zone to sync.
    public init(_ zoneID: CloudRecord.ZoneID, recordTypes: [String] = [], fullCheckInterval: Duration = .seconds(3600))
    {
        self.zoneID = zoneID
        self.recordTypes = recordTypes
        self.fullCheckInterval = fullCheckInterval
    }

    /// Whether the zone has change tokens: every zone but the default zone.
    package var hasChangeTokens: Bool { zoneID.zoneName != CloudRecord.ZoneID.defaultZoneName }
}

/// What happens when the user whose data the store holds is no longer the signed-in user.
public enum AccountChangePolicy: String, Sendable, Hashable {
    /// Delete the local data and pending changes, then sync the new user's data (CKSyncEngine's advice).
    case resetLocalStore
    /// Stop syncing until the app calls ``SyncEngine/resetLocalStoreForCurrentAccount()`` or
    /// ``SyncEngine/adoptCurrentAccount()``; nothing of the previous user's is uploaded meanwhile.
    case pause
}

/// What to do with the local copy of a synced zone that was deleted on the server.
public enum ZoneDeletionResponse: String, Sendable, Hashable {
    /// Delete the local copy too, pending changes included: the data was meant to go.
    case deleteLocalData
    /// Create the zone again and upload the local copy, pending changes included.
    case reuploadLocalData

    /// The default: a zone the user purged (deleted the app's data in iCloud's settings) is deleted locally, as the
    /// user asked, and never uploaded again unless the app says so; a zone another device deleted, or that an
    /// encrypted-data reset emptied, is uploaded again from this device's copy (after a reset, devices hold the
    /// only copy left).
    @Sendable public static func `default`(for deletion: CloudZoneDeletion) -> ZoneDeletionResponse {
        deletion.reason == .purged ? .deleteLocalData : .reuploadLocalData
    }

    /// What the engine reports it did.
    var action: ZoneDeletionAction {
        switch self {
        case .deleteLocalData: .deletedLocalData
        case .reuploadLocalData: .recreated
        }
    }
}

/// How transient failures are retried: exponential backoff with jitter, never shorter than the server's
/// `retryAfter`.
public struct SyncRetryPolicy: Sendable, Hashable {
    /// How many times one request is tried before the sync ends with the error (and keeps every pending change).
    public var maximumAttempts: Int
    /// The wait after the first failure.
    public var initialDelay: Duration
    /// The longest wait.
    public var maximumDelay: Duration
    /// The fraction of each wait added at random, so devices that failed together don't retry together.
    public var jitter: Double
    /// The seed of the jitter's random numbers, for tests that assert exact waits; random if `nil`.
    public var seed: UInt64?

    /// A retry policy; by default five attempts, waits from 1 second to 5 minutes, 20% jitter.
    public init(
        maximumAttempts: Int = 5, initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(300),
        jitter: Double = 0.2, seed: UInt64? = nil
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.seed = seed
    }
}
