import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

@testable import NestedCloudKitSync

@Suite("Sync: devices on one server", .stopsEmulators)
struct SyncScenarioTests {
    @Test(arguments: ScenarioServer.allCases)
    func aGraphSavedOnOneDeviceArrivesWholeOnAnother(server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let (a, b) = (try await scenario.device(), try await scenario.device())
        let school = School(
            id: "s", name: "Hill", director: Person(id: "d", name: "Ada"),
            students: [Person(id: "p1", name: "Bo"), Person(id: "p2", name: "Cy")])
        try await a.store.save(school)
        try await a.sync()
        #expect(try await a.store.pendingChanges().isEmpty)
        try await b.sync()
        #expect(try await b.store.fetch(School.self, id: "s") == school)
        #expect(
            b.recorder.events.contains(
                .fetchedChanges(
                    SyncFetchedChanges(
                        zoneID: scenario.zoneID, saved: ["d", "p1", "p2", "s"].map(scenario.recordID), deleted: []))))
    }

    @Test(arguments: ScenarioServer.allCases)
    func aDecodedChangedAndSavedModelUpdatesInsteadOfConflicting(server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let a = try await scenario.device(Scenario.configuration(.serverWins))
        try await a.store.save(Note(id: "n", title: "one", body: ""))
        try await a.sync()
        var note = try #require(try await a.note("n"))
        note.title = "two"
        try await a.store.save(note)
        try await a.sync()
        #expect(a.recorder.resolutions.isEmpty)
        #expect(try await scenario.serverNotes()["n"]?.title == "two")
    }

    @Test(arguments: ScenarioServer.allCases)
    func deletionsReachOtherDevices(server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let (a, b) = (try await scenario.device(), try await scenario.device())
        try await a.store.save(Note(id: "n", title: "x", body: ""))
        try await a.sync()
        try await b.sync()
        try await b.store.delete(Note(id: "n", title: "x", body: ""))
        try await b.sync()
        try await a.sync()
        #expect(try await a.note("n") == nil)
        #expect(try await scenario.serverNotes().isEmpty)
    }

    // MARK: Conflict policies

    /// A and B both have `n`; both edit offline, B after A; A syncs first.
    private func editOffline(
        _ server: ScenarioServer, _ policy: ConflictPolicy, a edit: (inout Note) -> Void, b bEdit: (inout Note) -> Void
    ) async throws -> (any DeviceScenario, Device, Device) {
        let scenario = try await server.scenario()
        let a = try await scenario.device(Scenario.configuration(policy))
        let b = try await scenario.device(Scenario.configuration(policy))
        try await a.store.save(Note(id: "n", title: "title", body: "body"))
        try await a.sync()
        try await b.sync()
        var fromA = try #require(try await a.note("n"))
        edit(&fromA)
        try await a.store.save(fromA)
        scenario.clock.advance(by: .seconds(10))
        var fromB = try #require(try await b.note("n"))
        bEdit(&fromB)
        try await b.store.save(fromB)
        try await a.sync()
        try await b.sync()
        try await a.sync()
        return (scenario, a, b)
    }

    @Test(arguments: ScenarioServer.allCases)
    func serverWinsKeepsTheFirstUpload(server: ScenarioServer) async throws {
        let (scenario, a, b) = try await editOffline(
            server, .serverWins, a: { $0.title = "A" }, b: { $0.title = "B" })
        #expect(try await scenario.serverNotes()["n"]?.title == "A")
        #expect(try await b.note("n")?.title == "A")
        #expect(try await a.note("n")?.title == "A")
        #expect(b.recorder.resolutions == [ConflictResolution(recordID: scenario.recordID("n"), decision: .keptServer)])
    }

    @Test(arguments: ScenarioServer.allCases)
    func clientWinsKeepsTheLastUploadsChanges(server: ScenarioServer) async throws {
        let (scenario, a, b) = try await editOffline(
            server, .clientWins, a: { $0.title = "A" }, b: { $0.title = "B" })
        #expect(try await scenario.serverNotes()["n"]?.title == "B")
        #expect(try await a.note("n")?.title == "B")
        #expect(b.recorder.resolutions.map(\.decision) == [.keptClient])
    }

    @Test(arguments: ScenarioServer.allCases)
    func clientWinsOnlyWhereTheClientChangedAField(server: ScenarioServer) async throws {
        let (scenario, a, b) = try await editOffline(
            server, .clientWins, a: { $0.title = "A" }, b: { $0.body = "B" })
        // B's changes win, and only them: A's title, which B never touched, stays.
        #expect(try await scenario.serverNotes()["n"] == Note(id: "n", title: "A", body: "B"))
        #expect(try await a.note("n") == Note(id: "n", title: "A", body: "B"))
        #expect(b.recorder.resolutions.map(\.decision) == [.keptClient])
    }

    @Test(arguments: ScenarioServer.allCases)
    func newestEditWinsComparesTheUsersEditTimesNotTheUploadOrder(server: ScenarioServer) async throws {
        // B edited last but uploads last: B wins. Then the other way round: A edits last, B uploads last: A wins.
        let (scenario, a, _) = try await editOffline(
            server, .newestEditWins, a: { $0.title = "A" }, b: { $0.title = "B" })
        #expect(try await scenario.serverNotes()["n"]?.title == "B")
        #expect(try await a.note("n")?.title == "B")

        let second = try await server.scenario()
        let c = try await second.device(Scenario.configuration(.newestEditWins))
        let d = try await second.device(Scenario.configuration(.newestEditWins))
        try await c.store.save(Note(id: "n", title: "title", body: ""))
        try await c.sync()
        try await d.sync()
        try await d.store.save(Note(id: "n", title: "D, earlier", body: ""))
        second.clock.advance(by: .seconds(10))
        try await c.store.save(Note(id: "n", title: "C, later", body: ""))
        try await d.sync()  // D uploads first
        try await c.sync()  // C's upload conflicts; C's edit is newer and wins
        try await d.sync()
        #expect(try await second.serverNotes()["n"]?.title == "C, later")
        #expect(try await d.note("n")?.title == "C, later")
        #expect(c.recorder.resolutions.map(\.decision) == [.keptClient])
    }

    @Test(arguments: ScenarioServer.allCases)
    func fieldByFieldMergesDifferentFields(server: ScenarioServer) async throws {
        let (scenario, a, b) = try await editOffline(
            server, .fieldByField, a: { $0.title = "A" }, b: { $0.body = "B" })
        let merged = Note(id: "n", title: "A", body: "B")
        #expect(try await scenario.serverNotes()["n"] == merged)
        #expect(try await a.note("n") == merged)
        #expect(try await b.note("n") == merged)
        #expect(
            b.recorder.resolutions.map(\.decision) == [.merged(fromServer: ["title"], fromClient: ["body"])])
    }

    @Test(arguments: ScenarioServer.allCases)
    func fieldByFieldKeepsTheNewerEditOfTheSameField(server: ScenarioServer) async throws {
        let (scenario, a, _) = try await editOffline(
            server,
            .fieldByField, a: { $0.title = "A" },
            b: {
                $0.title = "B"
                $0.pinned = true
            })
        #expect(try await scenario.serverNotes()["n"] == Note(id: "n", title: "B", body: "body", pinned: true))
        #expect(try await a.note("n") == Note(id: "n", title: "B", body: "body", pinned: true))
    }

    @Test(arguments: ScenarioServer.allCases)
    func aCustomPolicySeesAllThreeRecordsAndItsMergeIsSaved(server: ScenarioServer) async throws {
        let policy = ConflictPolicy.custom { conflict in
            var merged = conflict.server
            let server = conflict.server["title"].flatMap { if case .string(let s) = $0 { s } else { nil } } ?? ""
            let client = conflict.client["title"].flatMap { if case .string(let s) = $0 { s } else { nil } } ?? ""
            merged["title"] = .string([server, client].sorted().joined(separator: "+"))
            #expect(conflict.ancestor?["title"] == .string("title"))
            #expect(conflict.locallyChangedKeys == ["title"])
            #expect(conflict.serverChangedKeys == ["title"])
            return .merged(merged)
        }
        let (scenario, a, _) = try await editOffline(
            server, policy, a: { $0.title = "A" }, b: { $0.title = "B" })
        #expect(try await scenario.serverNotes()["n"]?.title == "A+B")
        #expect(try await a.note("n")?.title == "A+B")
    }

    // MARK: Deletes against edits

    @Test(arguments: ScenarioServer.allCases)
    func aServerDeletionAgainstALocalEditFollowsThePolicy(server: ScenarioServer) async throws {
        for policy in [DeleteConflictPolicy.editWins, .deleteWins] {
            let scenario = try await server.scenario()
            let a = try await scenario.device(Scenario.configuration(deletes: policy))
            let b = try await scenario.device(Scenario.configuration(deletes: policy))
            try await a.store.save(Note(id: "n", title: "t", body: ""))
            try await a.sync()
            try await b.sync()
            try await a.store.delete(Note(id: "n", title: "t", body: ""))
            try await b.store.save(Note(id: "n", title: "edited", body: ""))
            try await a.sync()
            try await b.sync()
            try await a.sync()
            let id = scenario.recordID("n")
            switch policy {
            case .editWins:
                #expect(try await scenario.serverNotes()["n"]?.title == "edited")
                #expect(try await a.note("n")?.title == "edited")
                #expect(b.recorder.resolutions == [ConflictResolution(recordID: id, decision: .recreatedFromClient)])
            case .deleteWins:
                #expect(try await scenario.serverNotes().isEmpty)
                #expect(try await b.note("n") == nil)
                #expect(b.recorder.resolutions == [ConflictResolution(recordID: id, decision: .deletedWithServer)])
            }
        }
    }

    @Test(arguments: ScenarioServer.allCases)
    func aLocalDeletionAgainstAServerEditFollowsThePolicy(server: ScenarioServer) async throws {
        for policy in [DeleteConflictPolicy.editWins, .deleteWins] {
            let scenario = try await server.scenario()
            let a = try await scenario.device(Scenario.configuration(deletes: policy))
            let b = try await scenario.device(Scenario.configuration(deletes: policy))
            try await a.store.save(Note(id: "n", title: "t", body: ""))
            try await a.sync()
            try await b.sync()
            try await a.store.save(Note(id: "n", title: "edited", body: ""))
            try await b.store.delete(Note(id: "n", title: "t", body: ""))
            try await a.sync()
            try await b.sync()
            try await a.sync()
            switch policy {
            case .editWins:
                #expect(try await scenario.serverNotes()["n"]?.title == "edited")
                #expect(try await b.note("n")?.title == "edited")
                #expect(b.recorder.resolutions.map(\.decision) == [.restoredFromServer])
            case .deleteWins:
                #expect(try await scenario.serverNotes().isEmpty)
                #expect(try await a.note("n") == nil)
                #expect(b.recorder.resolutions.map(\.decision) == [.keptLocalDeletion])
            }
        }
    }

    // MARK: Limits and order

    @Test func uploadsGoInBatchesOfTheServersLimitTargetsFirst() async throws {
        let scenario = Scenario(maximumItemsPerRequest: 3)
        let a = try await scenario.device()
        let students = (0..<10).map { Person(id: "p\($0)", name: "\($0)") }
        let school = School(id: "s", name: "S", director: Person(id: "d", name: "D"), students: students)
        try await a.store.save(school)
        try await a.sync()
        #expect(try await a.store.pendingChanges().isEmpty)
        #expect(scenario.server.network.statistics.recordsSaved == 12)
        #expect(scenario.server.network.statistics.modifyRequests == 4)
        let b = try await scenario.device()
        try await b.sync()
        #expect(try await b.store.fetch(School.self, id: "s") == school)
    }

    @Test func limitExceededHalvesTheBatchAndNothingIsLost() async throws {
        let scenario = Scenario(maximumItemsPerRequest: 20)
        let server = InterceptingDatabase(base: scenario.server, maximumSaves: 6)
        let a = try await Device(server: server, clock: scenario.clock)
        for index in 0..<23 { try await a.store.save(Note(id: "n\(index)", title: "\(index)", body: "")) }
        try await a.sync()
        #expect(await scenario.serverNotes().count == 23)
        #expect(try await a.store.pendingChanges().isEmpty)
        // 20 refused, 10 refused, 5 accepted, then grown back a tenth at a time: 6, then 7 refused, 3, 4, 5.
        #expect(await server.uploadSizes == [5, 6, 3, 4, 5])
    }

    @Test func aParentFetchedBeforeItsChildrenIsLinkedWhenTheyArrive() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        let school = School(
            id: "s", name: "S", director: Person(id: "d", name: "D"), students: [Person(id: "p", name: "P")])
        try await a.store.save(school)
        try await a.sync()
        // The parent changes last, so it comes last in the log; one record a page.
        try await a.store.save(Person(id: "d", name: "D2"))
        try await a.sync()
        let b = try await scenario.device(
            SyncConfiguration(retry: SyncRetryPolicy(jitter: 0), fetchResultsLimit: 1))
        try await b.sync()
        var expected = school
        expected.director.name = "D2"
        #expect(try await b.store.fetch(School.self, id: "s") == expected)
    }

    // MARK: Faults

    @Test func retryAfterIsHonouredAndTheSyncCompletes() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        try await a.store.save(Note(id: "n", title: "t", body: ""))
        scenario.server.network.throttleNextRequest(retryAfter: 30)
        try await a.sync()
        #expect(scenario.clock.waits == [.seconds(30)])
        #expect(await scenario.serverNotes()["n"]?.title == "t")
    }

    @Test func aLostResponseIsRecognisedAsOurOwnWrite() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        try await a.sync()
        try await a.store.save(Note(id: "n", title: "t", body: ""))
        scenario.server.network.loseNextResponse()
        try await a.sync()
        #expect(a.recorder.resolutions.isEmpty)
        #expect(try await a.store.pendingChanges().isEmpty)
        #expect(await scenario.serverNotes()["n"]?.title == "t")
        // The record has the server's change tag: the next edit saves without a conflict.
        try await a.store.save(Note(id: "n", title: "t2", body: ""))
        try await a.sync()
        #expect(a.recorder.resolutions.isEmpty)
        #expect(await scenario.serverNotes()["n"]?.title == "t2")
    }

    @Test func quotaExceededHaltsAndKeepsThePendingChanges() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        try await a.sync()
        try await a.store.save(Note(id: "n", title: "t", body: ""))
        scenario.server.network.failRecord(scenario.recordID("n"), with: .quotaExceeded)
        await #expect(throws: SyncError.halted(.quotaExceeded)) { try await a.sync() }
        #expect(a.recorder.events.contains(.halted(.quotaExceeded)))
        #expect(try await a.store.pendingChanges().map(\.recordID.recordName) == ["n"])
        #expect(try await a.engine.status().lastError == .halted(.quotaExceeded))
    }

    @Test func aRecordTheServerRefusesIsHaltedAfterRepeatedFailuresNotRetriedForever() async throws {
        let scenario = Scenario()
        let refusal = CloudDatabaseError.invalidArguments("field too large")
        let server = InterceptingDatabase(base: scenario.server, refused: [scenario.recordID("bad"): refusal])
        let a = try await Device(server: server, clock: scenario.clock)
        try await a.store.save(Note(id: "bad", title: "t", body: ""))
        try await a.store.save(Note(id: "good", title: "t", body: ""))
        for _ in 0..<3 { try await a.sync() }
        let pending = try await a.store.pendingChanges()
        #expect(pending.map(\.recordID.recordName) == ["bad"])
        #expect(pending.first?.isHalted == true)
        #expect(pending.first?.failures == 3)
        #expect(
            a.recorder.events.filter { if case .uploadFailed = $0 { true } else { false } }
                == [
                    .uploadFailed(scenario.recordID("bad"), refusal, halted: false),
                    .uploadFailed(scenario.recordID("bad"), refusal, halted: false),
                    .uploadFailed(scenario.recordID("bad"), refusal, halted: true),
                ])
        #expect(await scenario.serverNotes().keys.sorted() == ["good"])
    }

    @Test(arguments: [
        CloudDatabaseError.batchRequestFailed(CloudRecord.ID(recordName: "stuck", zoneID: SyncStore.defaultZoneID)),
        .zoneNotFound(SyncStore.defaultZoneID),
        .serviceUnavailable(retryAfter: nil),
    ])
    func aServerThatKeepsRefusingTheSameWayCantHoldTheSyncInALoop(refusal: CloudDatabaseError) async throws {
        let scenario = Scenario()
        let server = InterceptingDatabase(base: scenario.server, refused: [scenario.recordID("stuck"): refusal])
        let a = try await Device(server: server, clock: scenario.clock)
        try await a.store.save(Note(id: "stuck", title: "", body: ""))
        try await a.store.save(Note(id: "fine", title: "", body: ""))
        // Still queued for a reason that may pass: the sync says so, rather than end as a success.
        await #expect(throws: SyncError.database(refusal)) { try await a.sync() }
        #expect(try await a.store.pendingChanges().map(\.recordID.recordName) == ["stuck"])
        #expect(await scenario.serverNotes().keys.sorted() == ["fine"])
    }

    @Test func aRecordDeletedAfterAnUploadWhoseAnswerWasLostStaysDeleted() async throws {
        for existing in [false, true] {
            let scenario = Scenario()
            let a = try await scenario.device(
                SyncConfiguration(retry: SyncRetryPolicy(maximumAttempts: 1, jitter: 0)))
            try await a.sync()
            if existing {
                try await a.store.save(Note(id: "n", title: "first", body: ""))
                try await a.sync()
            }
            try await a.store.save(Note(id: "n", title: "second", body: ""))
            // The server applies the upload; the answer is lost and the sync gives up.
            scenario.server.network.loseNextResponse()
            await #expect(throws: SyncError.self) { try await a.sync() }
            try await a.store.deleteRecords(withIDs: [scenario.recordID("n")])
            try await a.sync()
            #expect(try await a.note("n") == nil, "existing: \(existing)")
            #expect(await scenario.serverNotes().isEmpty, "existing: \(existing)")
            #expect(a.recorder.resolutions.isEmpty, "existing: \(existing)")
        }
    }

    @Test func aServerDeletionOfAnotherDevicesRecordKeepsANeverUploadedOneWithTheSameName() async throws {
        let scenario = Scenario()
        let a = try await scenario.device(Scenario.configuration(deletes: .deleteWins))
        let b = try await scenario.device(Scenario.configuration(deletes: .deleteWins))
        try await a.sync()
        try await b.sync()
        try await b.store.save(Note(id: "n", title: "b's own", body: ""))
        try await a.store.save(Note(id: "n", title: "a's", body: ""))
        try await a.sync()
        try await a.store.deleteRecords(withIDs: [scenario.recordID("n")])
        try await a.sync()
        try await b.sync()
        #expect(try await b.note("n")?.title == "b's own")
        #expect(await scenario.serverNotes()["n"]?.title == "b's own")
    }

    // MARK: Tokens, zones, accounts

    @Test func anExpiredTokenRefetchesAndReconcilesWithoutLosingUnsentRecords() async throws {
        let scenario = Scenario()
        let (a, b) = (try await scenario.device(), try await scenario.device())
        try await a.store.save(Note(id: "gone", title: "", body: ""))
        try await a.store.save(Note(id: "kept", title: "", body: ""))
        try await a.sync()
        try await b.sync()
        try await a.store.delete(Note(id: "gone", title: "", body: ""))
        try await a.sync()
        await scenario.server.expireChangeTokens()
        try await b.store.save(Note(id: "unsent", title: "", body: ""))
        try await b.sync()
        #expect(b.recorder.events.contains(.changeTokenExpired(scenario.zoneID)))
        #expect(try await b.note("gone") == nil)
        #expect(try await b.note("kept") != nil)
        #expect(try await b.note("unsent") != nil)
        #expect(await scenario.serverNotes().keys.sorted() == ["kept", "unsent"])
    }

    @Test func aCompleteSyncRemovesWhatTheServerLostAndKeepsUnsentRecords() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        try await a.store.save(Note(id: "n", title: "", body: ""))
        try await a.sync()
        _ = try await scenario.server.modifyRecords(saving: [], deleting: [scenario.recordID("n")])
        try await a.store.save(Note(id: "new", title: "", body: ""))
        try await a.sync(complete: true)
        #expect(try await a.note("n") == nil)
        #expect(await scenario.serverNotes().keys.sorted() == ["new"])
    }

    /// A re-sync from the beginning (`sync(complete: true)`, sqlite-data #524's "re-sync without wiping") keeps
    /// every change the device hasn't sent: an edit of a synced record, a deletion, a new record, a change halted
    /// until the app acts; it takes what another device sent meanwhile, and sends what was queued.
    @Test(arguments: ScenarioServer.allCases)
    func aCompleteSyncKeepsEveryUnsentChangeAndTakesTheServersNewOnes(server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let (a, client) = try await scenario.flakyDevice(
            SyncConfiguration(retry: SyncRetryPolicy(jitter: 0), maximumRecordFailures: 1))
        let b = try await scenario.device()
        for id in ["edited", "deleted", "halted", "theirs"] {
            try await a.store.save(Note(id: id, title: id, body: ""))
        }
        try await a.sync()
        try await b.sync()
        try await a.store.save(Note(id: "halted", title: "refused", body: ""))
        await client.fail(scenario.recordID("halted"), with: .invalidArguments("refused"), times: 1)
        try await a.sync()
        #expect(try await a.store.pendingChanges().map(\.isHalted) == [true])
        try await b.store.save(Note(id: "theirs", title: "changed by b", body: ""))
        try await b.sync()
        try await a.store.save(Note(id: "edited", title: "edited by a", body: ""))
        try await a.store.delete(Note(id: "deleted", title: "", body: ""))
        try await a.store.save(Note(id: "new", title: "new", body: ""))

        try await a.sync(complete: true)
        #expect(
            try await a.store.fetchAll(Note.self).sorted { $0.id < $1.id } == [
                Note(id: "edited", title: "edited by a", body: ""), Note(id: "halted", title: "refused", body: ""),
                Note(id: "new", title: "new", body: ""), Note(id: "theirs", title: "changed by b", body: ""),
            ])
        #expect(try await a.store.pendingChanges().map(\.recordID.recordName) == ["halted"])
        #expect(try await a.store.pendingChanges().map(\.isHalted) == [true])
        #expect(
            try await scenario.serverNotes().mapValues(\.title) == [
                "edited": "edited by a", "halted": "halted", "new": "new", "theirs": "changed by b",
            ])
    }

    @Test func aZoneDeletedOnTheServerIsRecreatedAndReuploaded() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        try await a.store.save(Note(id: "n", title: "t", body: ""))
        try await a.sync()
        await scenario.server.deleteZone(scenario.zoneID, reason: .deleted)
        try await a.sync()
        #expect(a.recorder.events.contains(.zoneDeleted(scenario.zoneID, reason: .deleted, action: .recreated)))
        #expect(await scenario.serverNotes()["n"]?.title == "t")
    }

    @Test func aZoneThePurgedDeletesLocalDataUnlessTheHookKeepsIt() async throws {
        for action in [ZoneDeletionResponse.deleteLocalData, .reuploadLocalData] {
            let scenario = Scenario()
            var configuration = Scenario.configuration()
            configuration.zoneDeletionResponse = { _ in action }
            let a = try await scenario.device(configuration)
            try await a.store.save(Note(id: "n", title: "t", body: ""))
            try await a.sync()
            await scenario.server.deleteZone(scenario.zoneID, reason: .purged)
            try await a.sync()
            switch action {
            case .deleteLocalData:
                #expect(try await a.note("n") == nil)
                #expect(await scenario.serverNotes().isEmpty)
                #expect(
                    a.recorder.events.contains(
                        .zoneDeleted(scenario.zoneID, reason: .purged, action: .deletedLocalData)))
            case .reuploadLocalData:
                #expect(try await a.note("n") != nil)
                #expect(await scenario.serverNotes()["n"] != nil)
            }
        }
    }

    @Test func anotherUserSigningInResetsTheStoreAndNeverUploadsThePreviousUsersChanges() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        try await a.store.save(Note(id: "mine", title: "", body: ""))
        try await a.sync()
        try await a.store.save(Note(id: "queued", title: "", body: ""))
        await scenario.server.signIn(as: "bob")
        try await a.sync()
        #expect(
            a.recorder.events.contains(
                .accountChanged(
                    previous: InMemoryCloudDatabase.defaultUserRecordName, current: "bob", action: .resetLocalStore)))
        #expect(try await a.note("mine") == nil)
        #expect(try await a.store.pendingChanges().isEmpty)
        #expect(await scenario.serverNotes().isEmpty)  // bob's private database
    }

    @Test func thePausePolicyWaitsForTheApp() async throws {
        let scenario = Scenario()
        let a = try await scenario.device(Scenario.configuration(account: .pause))
        try await a.sync()
        try await a.store.save(Note(id: "queued", title: "", body: ""))
        await scenario.server.signIn(as: "bob")
        let reason = SyncHaltReason.accountChanged(
            previous: InMemoryCloudDatabase.defaultUserRecordName, current: "bob")
        await #expect(throws: SyncError.halted(reason)) { try await a.sync() }
        await #expect(throws: SyncError.halted(reason)) { try await a.sync() }
        #expect(await scenario.serverNotes().isEmpty)
        try await a.engine.adoptCurrentAccount()
        try await a.sync()
        #expect(await scenario.serverNotes().keys.sorted() == ["queued"])
    }

    // MARK: Concurrency

    @Test func aRecordEditedDuringItsUploadIsUploadedAgain() async throws {
        let scenario = Scenario()
        let box = StoreBox()
        let server = InterceptingDatabase(base: scenario.server) {
            try await box.store?.save(Note(id: "n", title: "second", body: ""))
        }
        let a = try await Device(server: server, clock: scenario.clock)
        box.store = a.store
        try await a.store.save(Note(id: "n", title: "first", body: ""))
        try await a.sync()
        #expect(await scenario.serverNotes()["n"]?.title == "second")
        #expect(try await a.store.pendingChanges().isEmpty)
        #expect(a.recorder.resolutions.isEmpty)
    }

    @Test func twoSyncsAtOnceRunAsOne() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        try await a.store.save(Note(id: "n", title: "t", body: ""))
        async let first = a.engine.sync()
        async let second = a.engine.sync()
        let (one, other) = try await (first, second)
        #expect(scenario.server.network.statistics.modifyRequests == 1)
        // The call that joined gets the same sync's summary.
        #expect(one == other)
        #expect(one.sentSaveCount == 1)
    }
}
