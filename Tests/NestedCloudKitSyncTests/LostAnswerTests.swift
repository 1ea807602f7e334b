import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitSync

/// An upload the server applied whose answer never came: whatever the device does next, the server's copy is its
/// own write, never another device's change.
@Suite("Sync: uploads whose answer was lost", .stopsEmulators)
struct LostAnswerTests {
    /// Every policy: none may take the device's own write for a conflict.
    static let policies: [(String, ConflictPolicy)] = [
        ("serverWins", .serverWins), ("clientWins", .clientWins), ("newestEditWins", .newestEditWins),
        ("fieldByField", .fieldByField), ("custom", .custom { _ in .keepServer }),
    ]

    private static func configuration(_ policy: ConflictPolicy) -> SyncConfiguration {
        SyncConfiguration(conflictPolicy: policy, retry: SyncRetryPolicy(maximumAttempts: 1, jitter: 0))
    }

    @Test(arguments: ScenarioServer.allCases)
    func aNewerEditAfterALostAnswerGoesOnTopOfTheDevicesOwnWrite(server: ScenarioServer) async throws {
        for (name, policy) in Self.policies {
            let scenario = try await server.scenario()
            let a = try await scenario.device(Self.configuration(policy))
            try await a.store.save(Note(id: "n", title: "v1", body: ""))
            try await a.sync()
            try await a.store.save(Note(id: "n", title: "v2", body: ""))
            // Lost on the upload itself: the server holds v2, the device doesn't know.
            try await scenario.loseNextUploadAnswer()
            await #expect(throws: SyncError.self) { try await a.sync() }
            #expect(try await scenario.serverNotes()["n"]?.title == "v2", "\(name)")
            try await a.store.save(Note(id: "n", title: "v3", body: ""))
            try await a.sync()
            #expect(try await scenario.serverNotes()["n"]?.title == "v3", "\(name)")
            #expect(try await a.note("n")?.title == "v3", "\(name)")
            #expect(a.recorder.resolutions.isEmpty, "\(name)")
            #expect(try await a.store.pendingChanges().isEmpty, "\(name)")
        }
    }

    @Test func anEarlierUploadTheChangeFeedHasntShownYetIsRecognisedWhenTheNewerEditIsSent() async throws {
        for (name, policy) in Self.policies {
            let scenario = Scenario()
            // The zone's changes lag behind: the device learns of v2 only from the upload's conflict.
            let server = InterceptingDatabase(
                base: scenario.server, hiddenFromChanges: [scenario.recordID("n")])
            let a = try await Device(server: server, clock: scenario.clock, configuration: Self.configuration(policy))
            try await a.store.save(Note(id: "n", title: "v1", body: ""))
            try await a.sync()
            try await a.store.save(Note(id: "n", title: "v2", body: ""))
            scenario.server.network.loseNextResponse(to: .modify)
            await #expect(throws: SyncError.database(.serverResponseLost)) { try await a.sync() }
            try await a.store.save(Note(id: "n", title: "v3", body: ""))
            try await a.sync()
            #expect(await scenario.serverNotes()["n"]?.title == "v3", "\(name)")
            #expect(a.recorder.resolutions.isEmpty, "\(name)")
            #expect(try await a.store.pendingChanges().isEmpty, "\(name)")
        }
    }

    @Test func twoLostAnswersInARowAreBothTheDevicesOwn() async throws {
        let scenario = Scenario()
        let a = try await scenario.device(Self.configuration(.serverWins))
        try await a.store.save(Note(id: "n", title: "v1", body: ""))
        try await a.sync()
        for title in ["v2", "v3"] {
            try await a.store.save(Note(id: "n", title: title, body: ""))
            scenario.server.network.loseNextResponse(to: .modify)
            await #expect(throws: SyncError.self) { try await a.sync() }
        }
        try await a.store.save(Note(id: "n", title: "v4", body: ""))
        try await a.sync()
        #expect(await scenario.serverNotes()["n"]?.title == "v4")
        #expect(a.recorder.resolutions.isEmpty)
    }

    @Test func anotherDevicesChangeAfterALostAnswerIsStillAConflict() async throws {
        let scenario = Scenario()
        let a = try await scenario.device(Self.configuration(.serverWins))
        let b = try await scenario.device(Self.configuration(.serverWins))
        try await a.store.save(Note(id: "n", title: "v1", body: ""))
        try await a.sync()
        try await b.sync()
        try await a.store.save(Note(id: "n", title: "a's v2", body: ""))
        scenario.server.network.loseNextResponse(to: .modify)
        await #expect(throws: SyncError.self) { try await a.sync() }
        try await b.sync()
        try await b.store.save(Note(id: "n", title: "b's", body: ""))
        try await b.sync()
        try await a.store.save(Note(id: "n", title: "a's v3", body: ""))
        try await a.sync()
        // The server's copy is b's: not one a sent, so the policy decides (server wins).
        #expect(await scenario.serverNotes()["n"]?.title == "b's")
        #expect(a.recorder.resolutions.map(\.decision) == [.keptServer])
    }
}
