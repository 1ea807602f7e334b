import Foundation
import NestedCloudKitCodable
import NestedCloudKitSync

/// A simulated device: a local store and an engine, on a server shared with other devices.
struct Device: Sendable {
    let store: SyncStore
    let engine: SyncEngine
    let recorder: EventRecorder

    init(
        server: any CloudDatabase, clock: VirtualCloudClock, path: String? = nil,
        configuration: SyncConfiguration = SyncConfiguration(retry: SyncRetryPolicy(jitter: 0))
    ) async throws {
        store = try path.map { try SyncStore(path: $0, clock: clock) } ?? SyncStore.inMemory(clock: clock)
        engine = SyncEngine(store: store, database: server, configuration: configuration)
        recorder = EventRecorder()
        let events = await engine.events()
        let recorder = self.recorder
        Task { for await event in events { recorder.append(event) } }
    }

    /// Syncs, then waits until the recorder has every event of the sync.
    func sync(complete: Bool = false) async throws {
        var thrown: (any Error)?
        do { try await engine.sync(complete: complete) } catch { thrown = error }
        await recorder.waitForFinish()
        if let thrown { throw thrown }
    }

    func note(_ id: String) async throws -> Note? {
        try await store.fetch(Note.self, id: id)
    }
}

/// The events an engine reported, in order.
///
/// `@unchecked Sendable` is sound: `events` and `finishes` are only touched while `lock` is held.
final class EventRecorder: @unchecked Sendable {
    private var recorded: [SyncEvent] = []
    private var finishes = 0
    private var consumedFinishes = 0
    private let lock = NSLock()

    func append(_ event: SyncEvent) {
        lock.withLock {
            recorded.append(event)
            if case .syncFinished = event { finishes += 1 }
        }
    }

    /// Every event so far.
    var events: [SyncEvent] { lock.withLock { recorded } }

    /// Forgets the events so far.
    func clear() { lock.withLock { recorded = [] } }

    /// Waits until one more sync's `syncFinished` arrived than the last call saw.
    func waitForFinish() async {
        while true {
            let done = lock.withLock {
                if finishes > consumedFinishes {
                    consumedFinishes += 1
                    return true
                }
                return false
            }
            if done { return }
            await Task.yield()
        }
    }

    var resolutions: [ConflictResolution] {
        events.compactMap { if case .conflictResolved(let resolution) = $0 { resolution } else { nil } }
    }
}
