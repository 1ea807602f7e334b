import Foundation
import NestedCloudKitCodable
import Observation

/// The sync engine's state, for a view to show and keep current: whether it syncs and how far it is, what waits
/// for upload, the last error, the user's account, and when a sync last succeeded. What SQLiteData's observable sync engine gives a
/// view.
///
/// ```swift
/// struct SyncBadge: View {
///     @Environment(\.syncEngine) private var engine   // an `@Entry` of the app's EnvironmentValues
///     @State private var sync = ObservedSyncState()
///
///     var body: some View {
///         Label(sync.isSyncing ? "Syncing" : "\(sync.pendingChanges) to send", systemImage: "icloud")
///             .task { sync.engine = engine }
///     }
/// }
/// ```
///
/// It follows the engine's events (a sync starting and finishing, a halt, an account change) and the store's
/// queue (a local save adds a pending change before any sync), on the main actor. As ``ObservedQuery``, nothing
/// is read when it is made: the first read of a property with an ``engine`` starts following it, and setting
/// another engine follows that one.
@MainActor
@Observable
public final class ObservedSyncState {
    /// Whether a sync is running.
    public var isSyncing: Bool { read(\.isSyncing) }
    /// Changes not yet on the server, halted ones included.
    public var pendingChanges: Int { read(\.pendingChanges) }
    /// Changes the engine stopped sending until the app acts (``SyncStore/retryHaltedChanges()``).
    public var haltedChanges: Int { read(\.haltedChanges) }
    /// Records the server changed that a fetch couldn't apply (``SyncStore/skippedRecords()``).
    public var skippedRecords: Int { read(\.skippedRecords) }
    /// The error that ended the last sync, or `nil` if it succeeded.
    public var lastError: SyncError? { read(\.lastError) }
    /// Why the engine is paused, if it is (an account change under ``AccountChangePolicy/pause``).
    public var pausedReason: SyncHaltReason? { read(\.pausedReason) }
    /// The user's iCloud account at the engine's last check; `nil` before the first sync.
    public var accountStatus: CloudAccountStatus? { read(\.accountStatus) }
    /// When a sync last finished without an error (kept in the store's file).
    public var lastSuccessfulSync: Date? { read(\.lastSuccessfulSync) }
    /// Where the running sync is (``SyncEngine/progress()``); `nil` when none runs.
    public var progress: SyncProgress? {
        startIfWanted()
        return currentProgress
    }
    /// Whether the engine's state was read once.
    public var isLoaded: Bool {
        startIfWanted()
        return loaded
    }

    /// The engine it follows; `nil` until the view has one. Setting another one follows it.
    public var engine: SyncEngine? {
        didSet { if engine !== oldValue { restart() } }
    }

    private var status = SyncStatus(
        pendingChanges: 0, haltedChanges: 0, lastSuccessfulSync: nil, lastError: nil, isSyncing: false,
        pausedReason: nil)
    private var loaded = false
    private var currentProgress: SyncProgress?
    @ObservationIgnored private var isWanted = false
    /// The tasks that follow the engine's events and the store's queue, behind a lock so that `deinit` (not on the
    /// main actor) can cancel them.
    @ObservationIgnored private let tasks = Locked<[Task<Void, Never>]>([])

    /// The state of an engine, read once something reads it.
    ///
    /// - Parameter engine: The engine, or `nil` to give it later (``engine``).
    public init(engine: SyncEngine? = nil) {
        self.engine = engine
    }

    deinit {
        tasks.withLock { for task in $0 { task.cancel() } }
    }

    private func read<Value>(_ property: KeyPath<SyncStatus, Value>) -> Value {
        startIfWanted()
        return status[keyPath: property]
    }

    private func startIfWanted() {
        guard !isWanted else { return }
        isWanted = true
        restart()
    }

    private func restart() {
        tasks.withLock { for task in $0 { task.cancel() } }
        currentProgress = nil
        guard isWanted, let engine else { return }
        let queue = engine.ledger.observeQueueState()
        let events = Task { @MainActor [weak self] in
            // Subscribed before the first read of the status, so no event falls between the two.
            let stream = await engine.events()
            await self?.refresh(from: engine)
            for await event in stream {
                guard let self else { return }
                switch event {
                case .syncStarted:
                    status.isSyncing = true
                case .syncFinished(let error):
                    status.isSyncing = false
                    status.lastError = error
                    await refresh(from: engine)
                case .halted, .accountChanged:
                    await refresh(from: engine)
                default:
                    continue
                }
            }
        }
        let counts = Task { @MainActor [weak self] in
            do {
                for try await state in queue {
                    guard let self else { return }
                    status.pendingChanges = state.counts.pending
                    status.haltedChanges = state.counts.halted
                    status.skippedRecords = state.counts.skipped
                    status.lastSuccessfulSync = state.lastSuccessfulSync
                }
            } catch {
                // A closed store: the engine's events say the rest.
            }
        }
        let progress = Task { @MainActor [weak self] in
            for await progress in await engine.progress() {
                guard let self else { return }
                currentProgress = progress.phase == .finished ? nil : progress
            }
        }
        tasks.withLock { $0 = [events, counts, progress] }
    }

    /// Reads the engine's whole state again: what its events don't carry (the pause, the account).
    private func refresh(from engine: SyncEngine) async {
        guard let current = try? await engine.status(), engine === self.engine else { return }
        status = current
        loaded = true
    }
}
