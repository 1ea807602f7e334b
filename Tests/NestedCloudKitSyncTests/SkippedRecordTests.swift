import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitSync

/// A record a fetch can't apply, for good: it is reported and skipped until the app acts, and never holds up the
/// other records or the uploads.
@Suite("Sync: records a fetch can't apply")
struct SkippedRecordTests {
    /// Whether a custom policy fails, switched by the test.
    final class PolicySwitch: Sendable {
        private let failing = Locked(true)
        var isFailing: Bool {
            get { failing.withLock { $0 } }
            set { failing.withLock { $0 = newValue } }
        }
    }

    struct PolicyBroke: Error {}

    @Test func aConflictPolicyThatAlwaysFailsSkipsTheRecordAndTheOtherChangesStillGo() async throws {
        let scenario = Scenario()
        let policy = PolicySwitch()
        let configuration = SyncConfiguration(
            conflictPolicy: .custom { conflict in
                if policy.isFailing { throw PolicyBroke() }
                return .keepClient
            }, retry: SyncRetryPolicy(jitter: 0))
        let a = try await scenario.device()
        let b = try await scenario.device(configuration)
        try await a.store.save(Note(id: "n", title: "one", body: ""))
        try await a.sync()
        try await b.sync()
        try await a.store.save(Note(id: "n", title: "a's", body: ""))
        try await a.sync()
        try await b.store.save(Note(id: "n", title: "b's", body: ""))
        try await b.store.save(Note(id: "other", title: "b's other note", body: ""))
        // Every sync ended with the policy's error before, and sent nothing.
        try await b.sync()
        try await b.sync()
        #expect(await scenario.serverNotes()["other"]?.title == "b's other note")
        #expect(await scenario.serverNotes()["n"]?.title == "a's")
        let n = scenario.recordID("n")
        #expect(try await b.store.skippedRecords().map(\.recordID) == [n])
        #expect(try await b.store.pendingChanges().map(\.recordID) == [n])
        #expect(try await b.store.pendingChanges().first?.isHalted == true)
        #expect(try await b.note("n")?.title == "b's")
        #expect(b.recorder.events.contains { if case .recordSkipped(n, _) = $0 { true } else { false } })
        #expect(try await b.engine.status().skippedRecords == 1)

        // The app fixed the cause and asks again: the conflict is resolved, and nothing is left waiting.
        policy.isFailing = false
        try await b.store.retryHaltedChanges()
        try await b.sync()
        #expect(try await b.store.skippedRecords().isEmpty)
        #expect(try await b.store.pendingChanges().isEmpty)
        #expect(await scenario.serverNotes()["n"]?.title == "b's")
    }

    @Test func aRecordTheClientCantReadIsSkippedAndTheSyncGoesOn() async throws {
        let scenario = Scenario()
        let bad = scenario.recordID("bad")
        let a = try await scenario.device()
        let (b, server) = try await scenario.flakyDevice()
        try await a.store.save(Note(id: "good", title: "", body: ""))
        try await a.store.save(Note(id: "bad", title: "unreadable", body: ""))
        try await a.sync()
        await server.setUnreadable([bad])
        try await b.store.save(Note(id: "mine", title: "", body: ""))
        try await b.sync()
        try await b.sync()
        #expect(try await b.note("good") != nil)
        #expect(try await b.note("bad") == nil)
        #expect(await scenario.serverNotes()["mine"] != nil)
        #expect(
            try await b.store.skippedRecords() == [
                SkippedRecord(
                    recordID: bad,
                    reason: SyncError.database(CloudDatabaseError.unreadable(bad)).description)
            ])
        #expect(b.recorder.events.filter { if case .recordSkipped = $0 { true } else { false } }.count == 1)

        // Still unreadable: asked for again, skipped again.
        try await b.store.retryHaltedChanges()
        try await b.sync()
        #expect(try await b.store.skippedRecords().map(\.recordID) == [bad])
        // Readable again (a client update): fetched by ID and applied.
        await server.setUnreadable([])
        try await b.store.retryHaltedChanges()
        try await b.sync()
        #expect(try await b.note("bad")?.title == "unreadable")
        #expect(try await b.store.skippedRecords().isEmpty)
    }
}
