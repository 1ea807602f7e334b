import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitSync

/// Zones deleted on the server: every device learns of it, even one that syncs only after the zone was created
/// again, and the app decides what happens to the local copy.
@Suite("Sync: zones deleted on the server", .stopsEmulators)
struct ZoneDeletionTests {
    private func configuration(
        _ respond: @escaping @Sendable (CloudZoneDeletion) -> ZoneDeletionResponse = ZoneDeletionResponse.default(for:)
    ) -> SyncConfiguration {
        SyncConfiguration(
            zoneDeletionResponse: { respond($0) }, retry: SyncRetryPolicy(maximumAttempts: 1, jitter: 0))
    }

    @Test(arguments: ScenarioServer.allCases)
    func aDeviceThatMissedAPurgeLearnsOfItAfterAnotherDeviceCreatedTheZoneAgain(server: ScenarioServer) async throws {
        for response in [ZoneDeletionResponse.deleteLocalData, .reuploadLocalData] {
            let scenario = try await server.scenario()
            let a = try await scenario.device(configuration())
            let b = try await scenario.device(configuration { $0.reason == .purged ? response : .reuploadLocalData })
            try await a.store.save(Note(id: "n1", title: "one", body: ""))
            try await a.store.save(Note(id: "n2", title: "two", body: ""))
            try await a.sync()
            try await b.sync()
            try await b.store.save(Note(id: "n1", title: "one, edited on b", body: ""))
            try await scenario.deleteZone(reason: .purged)
            try await a.sync()
            #expect(try await a.note("n1") == nil, "\(response)")
            // A creates the zone again with a new note; B syncs only now.
            try await a.store.save(Note(id: "n3", title: "three", body: ""))
            try await a.sync()
            try await b.sync()
            #expect(
                b.recorder.events.contains(
                    .zoneDeleted(scenario.zoneID, reason: .purged, action: response.action)), "\(response)")
            let onServer = try await scenario.serverNotes()
            switch response {
            case .deleteLocalData:
                // Nothing purged comes back: B's copy and its unsent edit went as the user asked.
                #expect(onServer.keys.sorted() == ["n3"], "\(response)")
                #expect(try await b.store.records(ofType: "Note").map(\.id.recordName) == ["n3"], "\(response)")
            case .reuploadLocalData:
                // The app said to keep it: B's copy, with its edit, is uploaded again.
                #expect(onServer.keys.sorted() == ["n1", "n2", "n3"], "\(response)")
                #expect(onServer["n1"]?.title == "one, edited on b", "\(response)")
            }
        }
    }

    @Test(arguments: ScenarioServer.allCases)
    func aZoneAnotherDeviceDeletedAsksTheApp(server: ScenarioServer) async throws {
        for response in [ZoneDeletionResponse.deleteLocalData, .reuploadLocalData] {
            let scenario = try await server.scenario()
            let asked = AskedDeletions()
            let a = try await scenario.device(
                configuration { deletion in
                    asked.append(deletion)
                    return response
                })
            try await a.store.save(Note(id: "n", title: "t", body: ""))
            try await a.sync()
            try await scenario.deleteZone(reason: .deleted)
            try await a.sync()
            #expect(asked.deletions == [CloudZoneDeletion(zoneID: scenario.zoneID, reason: .deleted)], "\(response)")
            #expect(
                a.recorder.events.contains(.zoneDeleted(scenario.zoneID, reason: .deleted, action: response.action)),
                "\(response)")
            switch response {
            case .deleteLocalData:
                #expect(try await a.note("n") == nil, "\(response)")
                #expect(try await scenario.serverNotes().isEmpty, "\(response)")
            case .reuploadLocalData:
                #expect(try await scenario.serverNotes()["n"]?.title == "t", "\(response)")
            }
        }
    }

    @Test func theDefaultDeletesAPurgedZoneLocallyAndUploadsADeletedOneAgain() {
        let zone = SyncStore.defaultZoneID
        #expect(ZoneDeletionResponse.default(for: CloudZoneDeletion(zoneID: zone, reason: .purged)) == .deleteLocalData)
        #expect(
            ZoneDeletionResponse.default(for: CloudZoneDeletion(zoneID: zone, reason: .deleted)) == .reuploadLocalData)
        #expect(
            ZoneDeletionResponse.default(for: CloudZoneDeletion(zoneID: zone, reason: .encryptedDataReset))
                == .reuploadLocalData)
    }

    @Test func aPurgeAppliedBeforeASyncFailedIsNotAppliedAgainOverNewLocalData() async throws {
        let scenario = Scenario()
        let a = try await scenario.device(configuration())
        let b = try await scenario.device(configuration())
        try await a.store.save(Note(id: "n1", title: "one", body: ""))
        try await a.sync()
        try await b.sync()
        await scenario.deleteZone(reason: .purged)
        try await a.sync()
        try await a.store.save(Note(id: "n3", title: "three", body: ""))
        try await a.sync()
        // B applies the purge, then fails fetching the zone's new contents.
        scenario.server.network.failNextRequest(to: .zoneChanges, with: .serviceUnavailable(retryAfter: nil))
        await #expect(throws: SyncError.self) { try await b.sync() }
        #expect(try await b.note("n1") == nil)
        try await b.store.save(Note(id: "new", title: "saved after the purge", body: ""))
        try await b.sync()
        #expect(try await b.note("new") != nil)
        #expect(try await b.note("n3") != nil)
        #expect(await scenario.serverNotes().keys.sorted() == ["n3", "new"])
    }

    @Test func aFirstSyncIgnoresDeletionsFromBeforeTheDeviceKnewTheDatabase() async throws {
        let scenario = Scenario()
        let a = try await scenario.device(configuration())
        try await a.store.save(Note(id: "n1", title: "one", body: ""))
        try await a.sync()
        await scenario.deleteZone(reason: .purged)
        try await a.sync()
        try await a.store.save(Note(id: "n2", title: "two", body: ""))
        try await a.sync()
        // A new device with a note saved offline: the old purge is history to it, not a reason to delete the note.
        let c = try await scenario.device(configuration())
        try await c.store.save(Note(id: "offline", title: "", body: ""))
        try await c.sync()
        #expect(!c.recorder.events.contains { if case .zoneDeleted = $0 { true } else { false } })
        #expect(await scenario.serverNotes().keys.sorted() == ["n2", "offline"])
    }
}

/// The deletions a response hook was asked about.
final class AskedDeletions: Sendable {
    private let asked = Locked<[CloudZoneDeletion]>([])

    func append(_ deletion: CloudZoneDeletion) { asked.withLock { $0.append(deletion) } }
    var deletions: [CloudZoneDeletion] { asked.withLock { $0 } }
}
