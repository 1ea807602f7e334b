import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

@testable import NestedCloudKitSync

/// What a new user reaches for first: deleting by type and ID, closing the store and the engine, knowing what a
/// sync did when it returns, one clock for the server and the devices.
@Suite("Sync: the store's and the engine's API")
struct StoreAndEngineAPITests {
    let clock = VirtualCloudClock()

    private func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID()).sqlite").path
    }

    @Test func aModelIsDeletedByTypeAndIDWithoutAValueOfIt() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        try await store.save(Note(id: "m", title: "memo", body: ""))
        let deleted = try await store.delete(Note.self, id: "m")
        #expect(deleted == [CloudRecord.ID(recordName: "m", zoneID: store.zoneID)])
        #expect(try await store.note("m") == nil)
    }

    @Test func aRecordIDWithoutTheStoresZoneIsRefusedNotSilentlyIgnored() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        try await store.save(Note(id: "m", title: "memo", body: ""))
        // A bare ID names the default zone, where this store has nothing.
        await #expect(throws: SyncError.unknownZone(.default)) {
            try await store.deleteRecords(withIDs: [CloudRecord.ID(recordName: "m")])
        }
        #expect(try await store.note("m") != nil)
        #expect(
            SyncError.unknownZone(.default).description.contains("CloudRecord.ID(recordName:zoneID: store.zoneID)"))
    }

    @Test func anIDTheStoreDoesntHaveInItsZoneDeletesNothingAndSaysSo() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        #expect(
            try await store.deleteRecords(withIDs: [CloudRecord.ID(recordName: "none", zoneID: store.zoneID)]).isEmpty)
        #expect(try await store.delete(Note.self, id: "none").isEmpty)
    }

    @Test func aClosedStoreRefusesCallsAndAReopenedOneHasItsPendingChanges() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SyncStore(path: path, clock: clock)
        try await store.save(Note(id: "n", title: "queued", body: ""))
        try await store.close()
        try await store.close()  // Twice is fine.
        await #expect(throws: SyncError.closed) { try await store.save(Note(id: "x", title: "", body: "")) }
        await #expect(throws: SyncError.closed) { _ = try await store.pendingChanges() }
        // The same file, opened again while the first store object is still alive: a restart in a test.
        let reopened = try SyncStore(path: path, clock: clock)
        #expect(try await reopened.pendingChanges().map(\.recordID.recordName) == ["n"])
    }

    @Test func aClosedEngineFinishesItsStreamsAndRefusesToSync() async throws {
        let scenario = Scenario()
        let store = try SyncStore.inMemory(clock: scenario.clock)
        let engine = SyncEngine(store: store, database: scenario.server)
        let events = await engine.events()
        try await store.save(Note(id: "n", title: "", body: ""))
        try await engine.sync()
        await engine.close()
        var received: [SyncEvent] = []
        for await event in events { received.append(event) }  // Ends: the stream finished.
        #expect(received.first == .syncStarted)
        #expect(received.last == .syncFinished(nil))
        await #expect(throws: SyncError.closed) { try await engine.sync() }
        // The store stays usable until it is closed too.
        try await store.save(Note(id: "later", title: "", body: ""))
        #expect(try await store.pendingChanges().map(\.recordID.recordName) == ["later"])
    }

    @Test func whenSyncReturnsItsSummaryHoldsTheSyncsEventsAndTheStreamHasThemToo() async throws {
        let scenario = Scenario()
        let store = try SyncStore.inMemory(clock: scenario.clock)
        let engine = SyncEngine(
            store: store, database: scenario.server,
            configuration: SyncConfiguration(conflictPolicy: .serverWins, retry: SyncRetryPolicy(jitter: 0)))
        var stream = await engine.events().makeAsyncIterator()
        try await store.save(Note(id: "n", title: "", body: ""))
        let summary = try await engine.sync()
        #expect(summary.events.first == .syncStarted)
        #expect(summary.events.last == .syncFinished(nil))
        #expect(summary.sentSaveCount == 1 && summary.sentDeletionCount == 0 && summary.changedAnything)
        #expect(summary.resolutions.isEmpty && summary.refusedChanges.isEmpty && summary.skippedRecordIDs.isEmpty)
        // Already in the stream, the pages of changes with their IDs: reading them doesn't wait for anything.
        var streamed: [SyncEvent] = []
        while streamed.last != .syncFinished(nil), let event = await stream.next() { streamed.append(event) }
        #expect(streamed.contains(.sentChanges(SyncSentChanges(saved: [scenario.recordID("n")], deleted: []))))
        #expect(SyncSummary(events: streamed) == summary)

        let other = try await scenario.device()
        try await other.sync()
        try await other.store.save(Note(id: "n", title: "changed elsewhere", body: ""))
        try await other.sync()
        try await store.save(Note(id: "n", title: "changed here", body: ""))
        let next = try await engine.sync()
        #expect(next.fetchedRecordCount == 1 && next.changedZones == [scenario.zoneID])
        #expect(next.resolutions == [ConflictResolution(recordID: scenario.recordID("n"), decision: .keptServer)])
    }

    @Test func theServerAndTheDevicesTakeTheirTimeFromOneClock() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        scenario.clock.advance(by: .seconds(42))
        try await a.store.save(Note(id: "n", title: "", body: ""))
        try await a.sync()
        let record = try #require(await scenario.server.allRecords.first)
        #expect(record.systemFields?.modificationDate == scenario.clock.now())
        #expect(record[SyncMetadataFields.editTime] == .int64(EditTimes.milliseconds(scenario.clock.now())))
    }
}
