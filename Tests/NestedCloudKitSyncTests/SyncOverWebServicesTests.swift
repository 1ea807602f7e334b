import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import NestedCloudKitSync
import NestedCloudKitWebServices
import Testing

/// The engine through CloudKit Web Services against the emulator, for what only a wire has: pushes delivered
/// through the long-poll URL. (The device scenarios in `SyncScenarioTests` run against the emulator too.)
@Suite("Sync: devices through Web Services and the emulator", .stopsEmulators)
struct SyncOverWebServicesTests {
    @Test func aPushThroughTheLongPollURLMakesTheOtherDeviceFetch() async throws {
        let scenario = try await EmulatorScenario.start()
        let a = try await scenario.device()
        let bDatabase = try await scenario.database()
        let b = try await Device(
            server: bDatabase, clock: scenario.clock,
            configuration: SyncConfiguration(retry: SyncRetryPolicy(jitter: 0)))
        // B's first sync saves its database subscription; its channel is where the subscription delivers.
        try await b.sync()
        let channel = try await bDatabase.createNotificationChannel()
        var pushes = bDatabase.notifications(from: channel).makeAsyncIterator()

        let note = Note(id: "n", title: "from A", body: "")
        try await a.store.save(note)
        try await a.sync()
        #expect(try await b.note("n") == nil)

        // A's sync fired B's database subscription (its zone's and its records' saves may each have); whichever push
        // B takes first, B fetches after A's sync finished, so A's note is there to fetch.
        let push = try #require(try await pushes.next())
        #expect(push.kind == .database)
        #expect(push.subscriptionID == "NestedCloudKitSync")
        #expect(push.databaseScope == .private)
        #expect(push.containerIdentifier == EmulatorScenario.container)
        #expect(push.userRecordName == (try await bDatabase.userRecordName()))
        try await b.engine.handle(push)
        await b.recorder.waitForFinish()
        #expect(try await b.note("n") == note)
        #expect(
            b.recorder.events.contains(
                .fetchedChanges(
                    SyncFetchedChanges(zoneID: scenario.zoneID, saved: [scenario.recordID("n")], deleted: []))
            ))
    }

    @Test func aChannelTheServerForgotEndsTheStreamWithAnErrorThatSaysWhatToDo() async throws {
        let scenario = try await EmulatorScenario.start()
        let database = try await scenario.database()
        let channel = try await database.createNotificationChannel()
        #expect(channel.apnsEnvironment == .development)
        try await scenario.emulator.reset()
        var pushes = database.notifications(from: channel).makeAsyncIterator()
        let error = await #expect(throws: CloudDatabaseError.self) { try await pushes.next() }
        guard case .invalidArguments(let message) = (error)?.kind else {
            Issue.record("expected invalidArguments, got \(String(describing: error))")
            return
        }
        #expect(message.contains("make a new channel"))
    }
}
