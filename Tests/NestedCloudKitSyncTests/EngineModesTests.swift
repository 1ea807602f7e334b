import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitSync

@Suite("Sync: automatic mode, pushes and zones without tokens")
struct EngineModesTests {
    @Test func inAutomaticModeALocalSaveIsSentAfterTheDelay() async throws {
        let scenario = Scenario()
        var configuration = Scenario.configuration()
        configuration.automaticSyncDelay = .seconds(2)
        let a = try await scenario.device(configuration)
        await a.engine.start()
        await a.recorder.waitForFinish()  // the sync start() schedules
        try await a.store.save(Note(id: "n", title: "t", body: ""))
        await a.recorder.waitForFinish()
        await a.engine.stop()
        #expect(await scenario.serverNotes()["n"]?.title == "t")
        #expect(scenario.clock.waits.allSatisfy { $0 == .seconds(2) })
        #expect(scenario.clock.waits.count >= 2)
    }

    @Test func aPushMakesTheEngineFetch() async throws {
        let scenario = Scenario()
        let (a, b) = (try await scenario.device(), try await scenario.device())
        try await b.sync()
        try await a.store.save(Note(id: "n", title: "pushed", body: ""))
        try await a.sync()
        #expect(!b.engine.handleNotification(["aps": ["content-available": 1]]))
        #expect(b.engine.handleNotification(["ck": ["met": ["dbs": 2, "sid": "NestedCloudKitSync"], "nid": "1"]]))
        await b.recorder.waitForFinish()
        #expect(try await b.note("n")?.title == "pushed")
    }

    @Test func pollingSyncsWithoutPushes() async throws {
        let scenario = Scenario()
        var configuration = Scenario.configuration()
        configuration.pollingInterval = .seconds(60)
        let (a, b) = (try await scenario.device(), try await scenario.device(configuration))
        try await a.store.save(Note(id: "n", title: "polled", body: ""))
        try await a.sync()
        await b.engine.start()
        await b.recorder.waitForFinish()
        await b.recorder.waitForFinish()
        await b.engine.stop()
        #expect(try await b.note("n")?.title == "polled")
        #expect(scenario.clock.waits.contains(.seconds(60)))
    }

    @Test func theDefaultZoneSyncsByDateAndFindsDeletionsOnSchedule() async throws {
        let scenario = Scenario()
        let zone = SyncZone(.default, recordTypes: ["Note"], fullCheckInterval: .seconds(600))
        let configuration = SyncConfiguration(zones: [zone], retry: SyncRetryPolicy(jitter: 0))
        let (a, b) = (try await scenario.device(configuration), try await scenario.device(configuration))
        try await a.store.save(Note(id: "n", title: "one", body: ""), in: .default)
        try await a.store.save(Note(id: "m", title: "m", body: ""), in: .default)
        try await a.sync()
        try await b.sync()
        #expect(try await b.store.fetch(Note.self, id: "n", in: .default)?.title == "one")

        scenario.clock.advance(by: .seconds(5))
        try await a.store.save(Note(id: "n", title: "two", body: ""), in: .default)
        try await a.store.deleteRecords(withIDs: [CloudRecord.ID(recordName: "m", zoneID: .default)])
        try await a.sync()
        try await b.sync()
        #expect(try await b.store.fetch(Note.self, id: "n", in: .default)?.title == "two")
        // A fetch by date can't see a deletion; the full check, when due, does.
        #expect(try await b.store.fetch(Note.self, id: "m", in: .default) != nil)
        scenario.clock.advance(by: .seconds(600))
        try await b.sync()
        #expect(try await b.store.fetch(Note.self, id: "m", in: .default) == nil)
        #expect(
            b.recorder.events.contains(
                .fetchedChanges(
                    SyncFetchedChanges(
                        zoneID: .default, saved: [], deleted: [CloudRecord.ID(recordName: "m", zoneID: .default)]))))
    }

    @Test func aZoneWithoutTokensNeedsItsRecordTypes() async throws {
        let scenario = Scenario()
        let a = try await scenario.device(SyncConfiguration(zones: [SyncZone(.default)]))
        await #expect(throws: SyncError.self) { try await a.sync() }
        let lastError = try await a.engine.status().lastError
        guard lastError?.code == .invalidConfiguration, let reason = lastError?.reason else {
            Issue.record("expected an invalid configuration")
            return
        }
        #expect(reason.contains("SyncZone(_:recordTypes:)"))
    }
}

extension EngineModesTests {
    @Test func aZoneTheAppSavedInIsSyncedEvenIfTheConfigurationForgotIt() async throws {
        let scenario = Scenario()
        let (a, b) = (try await scenario.device(), try await scenario.device())
        let other = CloudRecord.ZoneID(zoneName: "Other")
        try await a.store.save(Note(id: "n", title: "elsewhere", body: ""), in: other)
        try await a.sync()
        #expect(!a.recorder.events.contains { if case .zoneDeleted = $0 { true } else { false } })
        // b learns of the zone from the database's changes only once it has data there; a's own next sync fetches it.
        try await b.store.save(Note(id: "m", title: "", body: ""), in: other)
        try await b.sync()
        #expect(try await b.store.fetch(Note.self, id: "n", in: other)?.title == "elsewhere")
    }
}

@Suite("Sync: how the engine learns of local changes")
struct LocalChangeNoticeTests {
    /// The number the store's last local change noted, which an engine in automatic mode observes.
    private func notice(_ store: SyncStore) async throws -> Int64? {
        var iterator = store.ledger.localChanges().makeAsyncIterator()
        return try await iterator.next() ?? nil
    }

    @Test func theAppsWritesNoteALocalChangeAndTheEnginesOwnDoNot() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        #expect(try await notice(a.store) == nil)

        try await a.store.save(Note(id: "n", title: "t", body: ""))
        let saved = try #require(try await notice(a.store))
        // A save that changes nothing queues nothing, so it notes nothing.
        try await a.store.save(Note(id: "n", title: "t", body: ""))
        #expect(try await notice(a.store) == saved)

        // The engine's writes (the upload's acknowledgement, the pages it fetched) would wake it again: they don't.
        try await a.sync()
        #expect(try await a.store.pendingChanges().isEmpty)
        #expect(try await notice(a.store) == saved)

        try await a.store.update(Note.self, id: "n") { $0.title = "u" }
        let updated = try #require(try await notice(a.store))
        #expect(updated > saved)
        // An update whose closure throws writes nothing, and notes nothing.
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await a.store.update(Note.self, id: "n") { _ in throw Refused() }
        }
        #expect(try await notice(a.store) == updated)

        try await a.store.delete(Note.self, id: "n")
        let deleted = try #require(try await notice(a.store))
        #expect(deleted > updated)
        try await a.store.retryHaltedChanges()
        #expect(try #require(try await notice(a.store)) > deleted)
    }
}
