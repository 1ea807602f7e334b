import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

@testable import NestedCloudKitSync

/// The queue an app shows a user: each pending change with since when, its attempts, its last error, whether it is
/// halted, its size; observed as it changes; a halted change retried alone; a change discarded with an event and
/// the server's copy put back; the whole queue exported without a field's value.
@Suite("Sync: the queue of pending changes", .timeLimit(.minutes(2)))
struct PendingChangeQueueTests {
    private static let secret = "only the user may read this 5e1d"

    /// A device whose uploads of `refused` are refused for good, halted at the first refusal.
    private func deviceRefusing(
        _ scenario: Scenario
    ) async throws -> (device: Device, client: any RecordFaults) {
        try await scenario.flakyDevice(SyncConfiguration(retry: SyncRetryPolicy(jitter: 0), maximumRecordFailures: 1))
    }

    @Test func eachChangeSaysSinceWhenItsAttemptsItsErrorAndItsSize() async throws {
        let scenario = Scenario()
        let (device, client) = try await deviceRefusing(scenario)
        try await device.store.save(Note(id: "gone", title: "to delete", body: ""))
        try await device.sync()
        let queuedAt = scenario.clock.now()
        try await device.store.save(Note(id: "refused", title: "first", body: Self.secret))
        try await device.store.delete(Note.self, id: "gone")
        scenario.clock.advance(by: .seconds(90))
        // A second save before the server has the first joins the same change, which keeps its time.
        try await device.store.save(Note(id: "refused", title: "second", body: Self.secret))
        await client.fail(scenario.recordID("refused"), with: .invalidArguments("a field CloudKit refuses"), times: 1)
        await client.fail(scenario.recordID("gone"), with: .requestRateLimited(retryAfter: 0), times: 9)
        _ = try? await device.sync()

        let refused = try #require(try await device.store.record(withID: scenario.recordID("refused")))
        #expect(
            try await device.store.pendingChanges() == [
                PendingChange(
                    recordID: scenario.recordID("refused"), recordType: "Note", operation: .save, queuedAt: queuedAt,
                    failures: 1, lastError: CloudDatabaseError.invalidArguments("a field CloudKit refuses").description,
                    isHalted: true, wasSent: true, size: CloudRequestRules.fieldDataSize(of: refused)),
                PendingChange(
                    recordID: scenario.recordID("gone"), recordType: "Note", operation: .delete, queuedAt: queuedAt,
                    failures: 0, lastError: nil, isHalted: false, wasSent: true, size: 0),
            ])
        #expect(CloudRequestRules.fieldDataSize(of: refused) > Self.secret.utf8.count)
    }

    @Test func theObservedQueueMatchesTheListThroughAHaltARetryAndADiscard() async throws {
        let scenario = Scenario()
        let (device, client) = try await deviceRefusing(scenario)
        var observed = device.store.observePendingChanges().makeAsyncIterator()
        /// The observed list catches up with `pendingChanges()` after each step.
        func catchesUp() async throws -> Bool {
            let listed = try await device.store.pendingChanges()
            for _ in 0..<20 { if try await observed.next() == listed { return true } }
            return false
        }
        #expect(try await observed.next() == [])

        try await device.store.save(Note(id: "a", title: "a", body: ""))
        try await device.store.save(Note(id: "b", title: "b", body: ""))
        #expect(try await catchesUp())
        await client.fail(scenario.recordID("b"), with: .invalidArguments("refused"), times: 2)
        try await device.sync()
        #expect(try await device.store.pendingChanges().map { [$0.recordID.recordName: $0.isHalted] } == [["b": true]])
        #expect(try await catchesUp())

        #expect(try await device.store.retryHaltedChange(scenario.recordID("b")))
        #expect(try await device.store.pendingChanges().map(\.isHalted) == [false])
        #expect(try await device.store.pendingChanges().map(\.failures) == [0])
        #expect(try await catchesUp())
        try await device.sync()
        #expect(try await device.store.pendingChanges().map(\.isHalted) == [true])
        #expect(try await catchesUp())

        #expect(try await device.engine.discardPendingChange(scenario.recordID("b")))
        #expect(try await device.store.pendingChanges() == [])
        #expect(try await catchesUp())
    }

    @Test func retryingOneHaltedChangeLeavesTheOthersHalted() async throws {
        let scenario = Scenario()
        let (device, client) = try await deviceRefusing(scenario)
        for name in ["a", "b"] {
            try await device.store.save(Note(id: name, title: name, body: ""))
            await client.fail(scenario.recordID(name), with: .invalidArguments("refused"), times: 1)
        }
        try await device.sync()

        #expect(try await device.store.retryHaltedChange(scenario.recordID("a")))
        #expect(try await !device.store.retryHaltedChange(scenario.recordID("a")))
        #expect(try await !device.store.retryHaltedChange(scenario.recordID("nothing queued")))
        try await device.sync()

        #expect(try await device.store.pendingChanges().map(\.recordID.recordName) == ["b"])
        #expect(try await scenario.serverNotes().keys.sorted() == ["a"])
    }

    @Test func discardingASavePutsTheServersCopyBackWithAnEvent() async throws {
        let scenario = Scenario()
        let (device, client) = try await deviceRefusing(scenario)
        try await device.store.save(Note(id: "n", title: "on the server", body: ""))
        try await device.sync()
        try await device.store.save(Note(id: "n", title: "mine", body: Self.secret))
        await client.fail(scenario.recordID("n"), with: .invalidArguments("refused"), times: 1)
        try await device.sync()
        device.recorder.clear()

        #expect(try await device.engine.discardPendingChange(scenario.recordID("n")))

        #expect(try await device.note("n") == Note(id: "n", title: "on the server", body: ""))
        #expect(try await device.store.pendingChanges() == [])
        let discarded = device.recorder.events.compactMap { event -> CloudRecord? in
            guard case .changeDiscarded(let id, let record) = event, id == scenario.recordID("n") else { return nil }
            return record
        }
        #expect(discarded.map { $0["title"] } == [.string("mine")])
        // Nothing left to send: the next sync sends nothing, and the server keeps its copy.
        try await device.sync()
        #expect(try await scenario.serverNotes()["n"] == Note(id: "n", title: "on the server", body: ""))
        #expect(!device.recorder.events.contains { if case .sentChanges = $0 { true } else { false } })
    }

    @Test func discardingADeletionBringsTheRecordBackAndANewRecordGoes() async throws {
        let scenario = Scenario()
        let device = try await scenario.device()
        try await device.store.save(Note(id: "kept", title: "kept", body: ""))
        try await device.sync()
        try await device.store.delete(Note.self, id: "kept")
        try await device.store.save(Note(id: "new", title: "never sent", body: ""))

        #expect(try await device.engine.discardPendingChange(scenario.recordID("kept")))
        #expect(try await device.engine.discardPendingChange(scenario.recordID("new")))
        #expect(try await !device.engine.discardPendingChange(scenario.recordID("new")))

        #expect(try await device.note("kept") == Note(id: "kept", title: "kept", body: ""))
        #expect(try await device.note("new") == nil)
        #expect(try await device.store.pendingChanges() == [])
    }

    @Test func aDiscardThatCantReadTheServerKeepsTheChange() async throws {
        let scenario = Scenario()
        let (device, client) = try await scenario.flakyDevice()
        try await device.store.save(Note(id: "n", title: "n", body: ""))
        await client.setUnreadable([scenario.recordID("n")])

        await #expect(throws: SyncError.self) { try await device.engine.discardPendingChange(scenario.recordID("n")) }

        #expect(try await device.store.pendingChanges().map(\.recordID.recordName) == ["n"])
        #expect(try await device.note("n") == Note(id: "n", title: "n", body: ""))
    }

    @Test func aChangeSavedAgainDuringItsUploadWaitsFromWhenTheServerHadTheFirst() async throws {
        let scenario = Scenario()
        let id = scenario.recordID("n")
        let store = Locked<SyncStore?>(nil)
        let flaky = Locked<FlakyDatabase<InterceptingDatabase>?>(nil)
        // During the first upload: half a minute later, the user saves again, and the next upload will fail.
        let intercepting = InterceptingDatabase(base: scenario.server) {
            scenario.clock.advance(by: .seconds(30))
            try await store.withLock { $0 }?.save(Note(id: "n", title: "second", body: ""))
            let client = flaky.withLock { $0 }
            await client?.fail(id, with: .requestRateLimited(retryAfter: 0), times: 1)
        }
        let client = FlakyDatabase(intercepting)
        flaky.withLock { $0 = client }
        let device = try await Device(
            server: client, clock: scenario.clock,
            configuration: SyncConfiguration(retry: SyncRetryPolicy(maximumAttempts: 1, jitter: 0)))
        store.withLock { $0 = device.store }
        let firstQueued = scenario.clock.now()
        try await device.store.save(Note(id: "n", title: "first", body: ""))

        _ = try? await device.sync()

        // The server has the first save; the second waits from then, not from the first save.
        #expect(try await scenario.serverNotes()["n"]?.title == "first")
        let waiting = try await device.store.pendingChanges()
        #expect(waiting.map(\.recordID) == [id])
        #expect(waiting.map(\.queuedAt) == [firstQueued.addingTimeInterval(30)])
    }

    @Test func theExportIsTheListAsJSONWithoutAFieldsValue() async throws {
        let scenario = Scenario()
        let (device, client) = try await deviceRefusing(scenario)
        try await device.store.save(Note(id: "a", title: Self.secret, body: Self.secret))
        try await device.store.save(Note(id: "b", title: Self.secret, body: ""))
        await client.fail(scenario.recordID("b"), with: .invalidArguments(Self.secret), times: 1)
        try await device.sync()
        try await device.store.save(Note(id: "a", title: "again", body: Self.secret))
        let store = device.store

        let exported = try await store.exportPendingChanges()

        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        var listed = try await store.pendingChanges()
        // The refused one first; the one sent, then saved again, queued after it.
        #expect(listed.map(\.recordID.recordName) == ["b", "a"])
        #expect(listed[0].lastError?.contains("5e1d") == true)
        // The export leaves the server's words out: they quote the value it refused.
        for index in listed.indices { listed[index].lastError = nil }
        #expect(try decoder.decode([PendingChange].self, from: exported) == listed)
        let text = try #require(String(data: exported, encoding: .utf8))
        #expect(!text.contains("5e1d"))
        #expect(text.contains(#""recordName" : "a""#))
        #expect(text.contains(#""queuedAt" : 1800000000"#))
    }
}
