import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import Observation
import Testing

@testable import NestedCloudKitSync

/// The objects a view holds (`ObservedQuery`, `ObservedModel`, `ObservedCount`, `ObservedSyncState`), as SwiftUI
/// uses them: made before the view has a store, made again on every rebuild of the view, read in `body` under
/// `withObservationTracking`.
@Suite("Store: observable objects for views")
@MainActor
struct ObservableObjectsTests {
    let clock = VirtualCloudClock()

    /// Whether reading `read` under observation tracking is followed by a change notification once `change` ran
    /// and the objects caught up (`settled`).
    private func notifies(
        reading read: () -> Void, after change: () async throws -> Void, until settled: () -> Bool
    ) async throws -> Bool {
        let changed = Locked(false)
        withObservationTracking(read) { changed.withLock { $0 = true } }
        try await change()
        try await waitUntil(settled)
        return changed.withLock { $0 }
    }

    @Test func anObjectReadsNothingUntilSomethingReadsItsResult() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Chore(id: "a", title: "open"))
        // What SwiftUI does when a parent rebuilds a view: the initializer runs again, its object is thrown away.
        for _ in 0..<3 { _ = ObservedQuery(ModelQuery(Chore.self), in: store) }
        let kept = ObservedQuery(ModelQuery(Chore.self), in: store)
        let count = ObservedCount(ModelQuery(Chore.self), in: store)
        let model = ObservedModel(Chore.self, id: "a", store: store)
        let before: [Int] = [kept.observationsStarted, count.observationsStarted, model.observationsStarted]
        #expect(before == [0, 0, 0])
        try await waitUntil { kept.isLoaded && count.isLoaded && model.isLoaded }
        let after: [Int] = [kept.observationsStarted, count.observationsStarted, model.observationsStarted]
        #expect(after == [1, 1, 1])
        #expect(kept.models.map(\.id) == ["a"] && count.count == 1 && model.model?.title == "open")
    }

    @Test func anObjectMadeBeforeItsStoreFollowsTheStoreItIsGiven() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Chore(id: "a", title: "open"))
        let open = ObservedQuery(ModelQuery(Chore.self).filter(.equals(.isDone, false)))
        #expect(open.models.isEmpty && !open.isLoaded && open.error == nil && open.observationsStarted == 0)
        open.store = store
        try await waitUntil { open.isLoaded }
        #expect(open.models.map(\.id) == ["a"])
        // The same store, or the same query, again: nothing starts.
        open.store = store
        open.query = ModelQuery(Chore.self).filter(.equals(.isDone, false))
        #expect(open.observationsStarted == 1)
        // Another store: followed, the last result shown until its own arrives.
        let other = try SyncStore.inMemory()
        try await other.save(Chore(id: "b", title: "elsewhere"))
        open.store = other
        #expect(open.observationsStarted == 2)
        try await waitUntil { open.models.map(\.id) == ["b"] }
        open.store = nil
        #expect(open.models.map(\.id) == ["b"])
    }

    @Test func oneModelFollowsItsChangesAndItsAbsence() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Chore(id: "a", title: "first"))
        let chore = ObservedModel(Chore.self, id: "a", store: store)
        try await waitUntil { chore.isLoaded }
        #expect(chore.model?.title == "first")
        #expect(
            try await notifies(
                reading: { _ = chore.model },
                after: { try await store.update(Chore.self, id: "a") { $0.title = "second" } },
                until: { chore.model?.title == "second" }))
        try await store.delete(Chore.self, id: "a")
        try await waitUntil { chore.model == nil }
        chore.id = "b"
        try await store.save(Chore(id: "b", title: "another"))
        try await waitUntil { chore.model?.title == "another" }
        #expect(chore.error == nil)
    }

    @Test func aCountFollowsTheQueryWithoutDecoding() async throws {
        let store = try SyncStore.inMemory()
        let open = ObservedCount(ModelQuery(Chore.self).filter(.equals(.isDone, false)), in: store)
        try await waitUntil { open.isLoaded }
        #expect(open.count == 0)
        #expect(
            try await notifies(
                reading: { _ = open.count },
                after: {
                    try await store.save(Chore(id: "a", title: "a"))
                    try await store.save(Chore(id: "b", title: "b", isDone: true))
                },
                until: { open.count == 1 }))
        open.query = ModelQuery(Chore.self)
        try await waitUntil { open.count == 2 }
        open.query = ModelQuery(Chore.self).filter(.equals(.named("nope"), 1))
        try await waitUntil { open.error != nil }
        guard (open.error as? SyncError)?.code == .invalidQuery else {
            Issue.record("expected invalidQuery, got \(String(describing: open.error))")
            return
        }
    }

    @Test func theSyncStateFollowsLocalSavesSyncsAndErrors() async throws {
        let server = InMemoryCloudDatabase(clock: clock)
        let store = try SyncStore.inMemory(clock: clock)
        let engine = SyncEngine(
            store: store, database: server,
            configuration: SyncConfiguration(retry: SyncRetryPolicy(maximumAttempts: 1, jitter: 0)))
        let state = ObservedSyncState()
        // Without an engine, the state reads as idle and empty.
        #expect(!state.isSyncing && state.pendingChanges == 0 && !state.isLoaded)
        state.engine = engine
        try await waitUntil { state.isLoaded }
        #expect(state.accountStatus == nil && state.lastSuccessfulSync == nil && state.lastError == nil)

        #expect(
            try await notifies(
                reading: { _ = state.pendingChanges },
                after: { try await store.save(Chore(id: "a", title: "a")) },
                until: { state.pendingChanges == 1 }))
        try await engine.sync()
        // The account as the sync checked it: read again once the sync has finished.
        try await waitUntil {
            state.pendingChanges == 0 && state.lastSuccessfulSync != nil && !state.isSyncing
                && state.accountStatus == .available
        }
        #expect(state.lastSuccessfulSync == clock.now())

        server.network.failNextRequest(with: .quotaExceeded)
        try await store.save(Chore(id: "b", title: "b"))
        await #expect(throws: SyncError.self) { try await engine.sync() }
        try await waitUntil { state.lastError != nil }
        #expect(state.pendingChanges == 1)
        await engine.close()
    }

    /// Yields until the condition holds: the objects deliver on the main actor after the store's own work.
    private func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<100_000 where !condition() { await Task.yield() }
        #expect(condition())
    }
}
