import Foundation
import Logging
import NestedCloudKitCodable

/// Keeps a ``SyncStore`` in sync with a `CloudDatabase`: sends local changes, fetches other devices' changes,
/// resolves conflicts by the configured policy.
///
/// ```swift
/// let engine = SyncEngine(store: store, database: database)
/// for await event in await engine.events() { ... }    // in a task of its own
/// try await engine.sync()                              // or: await engine.start() to sync by itself
/// ```
///
/// A sync checks the user, creates the zones (and a database subscription), fetches the database's and then each
/// changed zone's changes until none are left, then sends the pending changes in batches. Local reads and writes go
/// on during a sync; a second ``sync(complete:)`` while one runs joins it.
///
/// Nothing is lost: a pending change leaves the store's queue only when the server acknowledged that version of
/// it, or a policy or the app decided (with an event). Transient failures wait and retry; failures retrying can't fix halt
/// with an event that says what to do.
public actor SyncEngine {
    /// The local store.
    public nonisolated let store: SyncStore
    /// The database it syncs with: the user's private database.
    public nonisolated let database: any CloudDatabase
    /// The user's shared database, if the engine syncs what others share with them too.
    public nonisolated let sharedDatabase: (any CloudDatabase)?
    /// How it syncs.
    public nonisolated let configuration: SyncConfiguration

    var running: Task<SyncSummary, any Error>?
    /// Work on the queue that no sync may overlap (``discardPendingChange(_:)``): a sync waits for it.
    var exclusiveWork: Task<Void, Never>?
    /// The events of the running sync, for its summary.
    private var collected: SyncSummary?
    private(set) var isClosed = false
    var pausedReason: SyncHaltReason?
    var lastError: SyncError?
    /// The account's status at the last check; `nil` before the first.
    var accountStatus: CloudAccountStatus?
    /// The size of the next upload batch: halved on `limitExceeded`, grown back slowly after successes.
    var batchSize: Int
    var random: SplitMix64
    private var continuations: [UUID: AsyncStream<SyncEvent>.Continuation] = [:]
    /// Where the running sync is (``progress()``); `nil` between syncs.
    var currentProgress: SyncProgress?
    var progressContinuations: [UUID: AsyncStream<SyncProgress>.Continuation] = [:]
    private var automaticTasks: [Task<Void, Never>] = []
    private var debounceTask: Task<Void, Never>?
    /// Whether the engine syncs by itself (``start()``).
    private var isAutomatic = false

    /// Creates an engine; nothing happens until ``sync(complete:)`` or ``start()``.
    ///
    /// - Parameters:
    ///   - store: The local store.
    ///   - database: The user's private database.
    ///   - sharedDatabase: The user's shared database, to sync the zones others share with them too: each
    ///     arrives in the store under its owner's name (`CloudRecord.ZoneID(zoneName:ownerName:)`), changes to it
    ///     go back under the user's permission, and losing access removes it locally
    ///     (``SyncEvent/sharedZoneRemoved(_:discardedChanges:)``).
    ///   - configuration: How it syncs.
    public init(
        store: SyncStore, database: any CloudDatabase, sharedDatabase: (any CloudDatabase)? = nil,
        configuration: SyncConfiguration = SyncConfiguration()
    ) {
        self.store = store
        self.database = database
        self.sharedDatabase = sharedDatabase
        self.configuration = configuration
        batchSize = max(1, database.maximumItemsPerRequest)
        random = SplitMix64(seed: configuration.retry.seed ?? UInt64.random(in: 0...UInt64.max))
    }

    /// The zones synced: the configured ones, or the store's zone.
    nonisolated var zones: [SyncZone] {
        configuration.zones.isEmpty ? [SyncZone(store.zoneID)] : configuration.zones
    }

    var clock: any CloudClock { store.clock }

    /// The engine's view of the store: the server's copies, the queue, the tokens.
    nonisolated var ledger: SyncLedger { store.ledger }

    // MARK: Events and status

    /// A new stream of everything the engine reports from now on; each caller gets its own. The streams finish when
    /// the engine is closed.
    public func events() -> AsyncStream<SyncEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: SyncEvent.self)
        guard !isClosed else {
            continuation.finish()
            return stream
        }
        continuations[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeContinuation(id) }
        }
        return stream
    }

    private func removeContinuation(_ id: UUID) {
        continuations[id] = nil
    }

    func emit(_ event: SyncEvent) {
        collected?.record(event)
        let entry = SyncLog.entry(for: event, summary: collected)
        configuration.logger.log(level: entry.level, entry.message, metadata: entry.metadata)
        for continuation in continuations.values { continuation.yield(event) }
    }

    /// What the engine and the store's queue look like now.
    public func status() async throws -> SyncStatus {
        let counts = try await ledger.pendingCounts()
        return SyncStatus(
            pendingChanges: counts.pending, haltedChanges: counts.halted,
            lastSuccessfulSync: try await ledger.lastSuccessfulSync(), lastError: lastError,
            isSyncing: running != nil, pausedReason: pausedReason, skippedRecords: counts.skipped,
            accountStatus: accountStatus)
    }

    // MARK: Syncing

    /// Fetches the server's changes and sends the local ones.
    ///
    /// - Parameter complete: Fetch everything again instead of the changes since the stored tokens, and delete
    ///   local records the server no longer has (never those not yet uploaded): Seam3's `triggerSync(complete:)`.
    /// - Returns: What the sync did: its events, in order, each also given to the streams of ``events()`` before
    ///   this returns, its pages of changes counted (their IDs are in the streams). A call that joined a running
    ///   sync gets that sync's summary.
    /// - Throws: ``SyncError``; the same error ends the ``SyncEvent/syncFinished(_:)`` event.
    @discardableResult
    public func sync(complete: Bool = false) async throws -> SyncSummary {
        guard !isClosed else { throw SyncError.closed }
        while let exclusiveWork { await exclusiveWork.value }
        // A second request joins the running sync; a complete one waits for it, then runs in full.
        if !complete, let running { return try await running.value }
        await waitUntilQuiet()
        guard !isClosed else { throw SyncError.closed }
        let task = Task { try await self.performSync(complete: complete) }
        running = task
        defer { running = nil }
        return try await task.value
    }

    /// Waits until neither a sync nor work that excludes one (``discardPendingChange(_:)``) runs; what the caller
    /// starts next, before its next `await`, runs alone.
    func waitUntilQuiet() async {
        while true {
            if let exclusiveWork {
                await exclusiveWork.value
            } else if let running {
                _ = try? await running.value
            } else {
                return
            }
        }
    }

    private func performSync(complete: Bool) async throws -> SyncSummary {
        collected = SyncSummary(events: [])
        defer { collected = nil }
        emit(.syncStarted)
        beginProgress(configuration.checksAccount ? .account : .zones)
        do {
            if let pausedReason { throw SyncError.halted(pausedReason) }
            if configuration.checksAccount { try await checkAccount() }
            enter(.zones)
            try await prepareZones()
            enter(.fetching)
            try await fetchChanges(complete: complete)
            // The user may have changed while the fetch ran: check again before anything is uploaded, so the
            // previous user's queue never reaches another account.
            if configuration.checksAccount, try await ledger.pendingCounts().pending > 0 { try await checkAccount() }
            try await sendChanges()
            try await ledger.setLastSuccessfulSync(clock.now())
            lastError = nil
            finishProgress()
            emit(.syncFinished(nil))
            return collected ?? SyncSummary(events: [])
        } catch {
            let syncError = Self.syncError(error)
            lastError = syncError
            if let reason = syncError.haltReason { emit(.halted(reason)) }
            finishProgress()
            emit(.syncFinished(syncError))
            if error is CancellationError { throw error }
            throw syncError
        }
    }

    /// Stops the engine for good: automatic mode stops, a running sync is cancelled (what it fetched is committed,
    /// pending changes stay queued in the store), the streams of ``events()`` and ``progress()`` finish, and every later
    /// ``sync(complete:)`` throws ``SyncError/closed``. The store stays open: close it after (``SyncStore/close()``).
    public func close() async {
        guard !isClosed else { return }
        isClosed = true
        stop()
        if let running {
            running.cancel()
            _ = try? await running.value
        }
        if let exclusiveWork { await exclusiveWork.value }
        for continuation in continuations.values { continuation.finish() }
        continuations = [:]
        for continuation in progressContinuations.values { continuation.finish() }
        progressContinuations = [:]
    }

    /// The public form of any failure: database errors that retrying can't fix become halts.
    static func syncError(_ error: any Error) -> SyncError {
        switch error {
        case let error as SyncError: error
        case let error as CloudDatabaseError:
            switch error.kind {
            case .quotaExceeded: .halted(.quotaExceeded)
            case .permissionFailure(let reason): .halted(.permissionFailure(reason))
            case .notAuthenticated: .halted(.notAuthenticated)
            case .accountTemporarilyUnavailable: .halted(.accountUnavailable(.temporarilyUnavailable))
            default: .database(error)
            }
        case is CancellationError: .database(.operationCancelled)
        default: .store(String(describing: error), underlying: error)
        }
    }

    /// Runs a request, waiting and trying again on transient failures as the retry policy says.
    ///
    /// Each attempt is logged at `debug`, named by the database's method, `name`, with `metadata`; and so is the
    /// error it ends with.
    func withRetries<T: Sendable>(
        _ name: String, _ metadata: @autoclosure () -> Logger.Metadata = [:], _ request: () async throws -> T
    ) async throws -> T {
        let logger = configuration.logger
        var attempt = 0
        while true {
            logger.debug(
                "request", metadata: metadata().merging(["request": "\(name)", "attempt": "\(attempt + 1)"]) { $1 })
            do {
                return try await request()
            } catch let error as CloudDatabaseError {
                logger.debug("request failed", metadata: ["request": "\(name)", "error": "\(error.logCode)"])
                guard error.isRetryable else { throw error }
                attempt += 1
                guard attempt < configuration.retry.maximumAttempts else { throw error }
                try await wait(after: error, attempt: attempt)
            }
        }
    }

    /// Waits before the next attempt: exponential backoff with jitter, at least the server's `retryAfter`.
    func wait(after error: CloudDatabaseError, attempt: Int) async throws {
        let policy = configuration.retry
        let initial = Self.seconds(policy.initialDelay)
        let backoff = min(Self.seconds(policy.maximumDelay), initial * pow(2, Double(max(0, attempt - 1))))
        let base = max(backoff, error.retryAfter ?? 0)
        let jitter =
            policy.jitter > 0 && policy.jitter.isFinite ? Double.random(in: 0...policy.jitter, using: &random) : 0
        // Bounded, so a huge `retryAfter` from a server (or a policy's delay) can't overflow the conversion.
        let milliseconds = min(base * (1 + jitter) * 1000, 86_400_000 * 365)
        let delay = Duration.milliseconds(Int64(milliseconds.isFinite ? max(0, milliseconds).rounded() : 0))
        emit(.retrying(after: delay, because: error))
        try await clock.sleep(for: delay)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    // MARK: Automatic mode

    /// Syncs by itself from now on: after local saves (debounced by ``SyncConfiguration/automaticSyncDelay``), every
    /// ``SyncConfiguration/pollingInterval`` if set, and on pushes given to ``handleNotification(_:)``.
    public func start() {
        guard !isAutomatic, !isClosed else { return }
        isAutomatic = true
        let localChanges = ledger.localChanges()
        automaticTasks.append(
            Task { [weak self] in
                // The first result is the state when the observation starts, which may already hold a save made
                // after the sync scheduled below read the queue: it schedules too (a sync already scheduled absorbs
                // it). The observation ends with the task (stop(), close()) or with the store (closed).
                do {
                    for try await change in localChanges where change != nil {
                        await self?.scheduleSync()
                    }
                } catch {}
            })
        if let interval = configuration.pollingInterval {
            let clock = self.clock
            automaticTasks.append(
                Task { [weak self] in
                    while !Task.isCancelled {
                        do { try await clock.sleep(for: interval) } catch { return }
                        _ = try? await self?.sync()
                    }
                })
        }
        scheduleSync()
    }

    /// Stops syncing by itself; a running sync finishes.
    public func stop() {
        isAutomatic = false
        for task in automaticTasks { task.cancel() }
        automaticTasks = []
        debounceTask?.cancel()
        debounceTask = nil
    }

    /// Schedules a sync after the delay, unless one is scheduled already: saves in quick succession share it, and
    /// a user who keeps saving can't postpone uploads forever.
    private func scheduleSync() {
        guard debounceTask == nil else { return }
        let clock = self.clock
        let delay = configuration.automaticSyncDelay
        debounceTask = Task { [weak self] in
            do { try await clock.sleep(for: delay) } catch { return }
            await self?.runScheduledSync()
        }
    }

    private func runScheduledSync() async {
        // Cleared before the sync starts: a save during the sync schedules the next one.
        debounceTask = nil
        _ = try? await sync()
    }

    /// Syncs because of a push: CloudKit's notification payload (`userInfo`), parsed by `CloudNotification`.
    ///
    /// - Returns: `false` if the payload isn't CloudKit's (nothing is done).
    @discardableResult
    public nonisolated func handleNotification(_ userInfo: [AnyHashable: Any]) -> Bool {
        guard let notification = CloudNotification(userInfo: userInfo) else { return false }
        Task { try? await self.handle(notification) }
        return true
    }

    /// Syncs because of a push. The payload is a hint only (pushes coalesce and can be dropped), so the engine
    /// fetches every change since its tokens.
    public func handle(_ notification: CloudNotification) async throws {
        try await sync()
    }
}
