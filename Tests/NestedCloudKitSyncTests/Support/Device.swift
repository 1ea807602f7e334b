import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import NestedCloudKitSync

/// A simulated device: a local store and an engine, on a server shared with other devices.
struct Device: Sendable {
    let store: SyncStore
    let engine: SyncEngine
    let recorder: EventRecorder

    init(
        server: any CloudDatabase, sharedDatabase: (any CloudDatabase)? = nil, clock: VirtualCloudClock,
        path: String? = nil,
        configuration: SyncConfiguration = SyncConfiguration(retry: SyncRetryPolicy(jitter: 0))
    ) async throws {
        store = try path.map { try SyncStore(path: $0, clock: clock) } ?? SyncStore.inMemory(clock: clock)
        engine = SyncEngine(
            store: store, database: server, sharedDatabase: sharedDatabase, configuration: configuration)
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
final class EventRecorder: Sendable {
    private struct State {
        var recorded: [SyncEvent] = []
        var finishes = 0
        var consumedFinishes = 0
    }

    private let state = Locked(State())

    func append(_ event: SyncEvent) {
        state.withLock { state in
            state.recorded.append(event)
            if case .syncFinished = event { state.finishes += 1 }
        }
    }

    /// Every event so far.
    var events: [SyncEvent] { state.withLock { $0.recorded } }

    /// Forgets the events so far.
    func clear() { state.withLock { $0.recorded = [] } }

    /// Waits until one more sync's `syncFinished` arrived than the last call saw.
    func waitForFinish() async {
        while true {
            let done = state.withLock { state in
                if state.finishes > state.consumedFinishes {
                    state.consumedFinishes += 1
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
