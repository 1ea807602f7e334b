import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitSync

/// A change leaves the queue only when the server has it or a policy said so, and a sync never ends as a success
/// while a change it tried to send is still queued for a reason that may pass: the cases the best peer's users lost
/// changes in (sqlite-data #432, #492), on every server with fault controls.
@Suite("Sync: no change left behind", .stopsEmulators)
struct QueuedChangeTests {
    private static let throttled = CloudDatabaseError.requestRateLimited(retryAfter: 0)

    @Test(arguments: ScenarioServer.allCases)
    func aSkippedRecordsPendingEditIsHaltedNotSentOverACopyTheDeviceNeverRead(server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let a = try await scenario.device()
        let (b, client) = try await scenario.flakyDevice()
        let n = scenario.recordID("n")
        try await a.store.save(Note(id: "n", title: "one", body: ""))
        try await a.sync()
        try await b.sync()
        try await a.store.save(Note(id: "n", title: "a's", body: ""))
        try await a.sync()
        // B edits offline, later than A; then the server's newer copy is one B can't read.
        scenario.clock.advance(by: .seconds(10))
        try await b.store.save(Note(id: "n", title: "b's", body: ""))
        await client.setUnreadable([n])
        try await b.sync()
        let reason = SyncError.database(CloudDatabaseError.unreadable(n)).description
        #expect(try await b.store.skippedRecords() == [SkippedRecord(recordID: n, reason: reason)])
        let pending = try #require(try await b.store.pendingChanges().first)
        #expect(pending.recordID == n && pending.isHalted && pending.lastError == reason)
        #expect(try await scenario.serverNotes()["n"]?.title == "a's")
        #expect(try await b.note("n")?.title == "b's")

        // Saved again while skipped: still halted, still not sent.
        try await b.store.save(Note(id: "n", title: "b's again", body: ""))
        try await b.sync()
        #expect(try await b.store.pendingChanges().map(\.isHalted) == [true])
        #expect(try await scenario.serverNotes()["n"]?.title == "a's")

        // Readable again, and the app asks: the server's copy is read, the edit merged onto it and sent.
        await client.setUnreadable([])
        try await b.store.retryHaltedChanges()
        try await b.sync()
        #expect(try await b.store.skippedRecords().isEmpty)
        #expect(try await b.store.pendingChanges().isEmpty)
        #expect(try await scenario.serverNotes()["n"] == b.note("n"))
        #expect(try await scenario.serverNotes()["n"]?.title == "b's again")
    }

    @Test(arguments: ScenarioServer.allCases)
    func eachRecordHasRetriesOfItsOwnNotASharedCountForTheSync(server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let (a, client) = try await scenario.flakyDevice(maximumItemsPerRequest: 1)
        try await a.sync()
        let names = (1...6).map { "n\($0)" }
        for name in names {
            try await a.store.save(Note(id: name, title: name, body: ""))
            await client.fail(scenario.recordID(name), with: Self.throttled, times: 1)
        }
        try await a.sync()
        #expect(try await scenario.serverNotes().keys.sorted() == names)
        #expect(try await a.store.pendingChanges().isEmpty)
        #expect(
            a.recorder.events.filter { if case .retrying = $0 { true } else { false } }
                == Array(repeating: .retrying(after: .seconds(1), because: Self.throttled), count: 6))
    }

    @Test(arguments: ScenarioServer.allCases)
    func aRecordIsTriedUpToTheLastAttemptAndBeyondItTheSyncFailsWithTheChangeQueued(
        server: ScenarioServer
    ) async throws {
        let scenario = try await server.scenario()
        let (a, client) = try await scenario.flakyDevice()
        try await a.sync()
        // Throttled four times: the fifth attempt, the last the policy allows, goes through.
        try await a.store.save(Note(id: "four", title: "", body: ""))
        await client.fail(scenario.recordID("four"), with: Self.throttled, times: 4)
        try await a.sync()
        #expect(try await scenario.serverNotes().keys.sorted() == ["four"])
        #expect(scenario.clock.waits.suffix(4) == [.seconds(1), .seconds(2), .seconds(4), .seconds(8)])

        // Throttled five times: the sync ends with the error, and the change is still queued, not halted.
        try await a.store.save(Note(id: "five", title: "", body: ""))
        await client.fail(scenario.recordID("five"), with: Self.throttled, times: 5)
        await #expect(throws: SyncError.database(Self.throttled)) { try await a.sync() }
        #expect(a.recorder.events.last == .syncFinished(.database(Self.throttled)))
        #expect(try await a.store.pendingChanges().map(\.recordID.recordName) == ["five"])
        #expect(try await a.store.pendingChanges().map(\.isHalted) == [false])
        #expect(try await a.engine.status().lastError == .database(Self.throttled))
        try await a.sync()
        #expect(try await scenario.serverNotes().keys.sorted() == ["five", "four"])
        #expect(try await a.store.pendingChanges().isEmpty)
    }

    @Test(arguments: ScenarioServer.allCases)
    func aChangeSentAgainUntilItsResendsRunOutFailsTheSync(server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let (a, client) = try await scenario.flakyDevice()
        try await a.sync()
        let stuck = scenario.recordID("stuck")
        try await a.store.save(Note(id: "stuck", title: "", body: ""))
        try await a.store.save(Note(id: "fine", title: "", body: ""))
        await client.fail(stuck, with: .batchRequestFailed(stuck), times: 10)
        await #expect(throws: SyncError.database(.batchRequestFailed(stuck))) { try await a.sync() }
        #expect(try await a.store.pendingChanges().map(\.recordID.recordName) == ["stuck"])
        #expect(try await scenario.serverNotes().keys.sorted() == ["fine"])
    }

    @Test(arguments: ScenarioServer.allCases)
    func aChangeTheServerLeftOutOfItsAnswerFailsTheSyncAndGoesAgainNextTime(server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let (a, client) = try await scenario.flakyDevice()
        try await a.sync()
        try await a.store.save(Note(id: "quiet", title: "t", body: ""))
        try await a.store.save(Note(id: "fine", title: "t", body: ""))
        await client.leaveOutAnswer(for: scenario.recordID("quiet"))
        await #expect(throws: SyncError.database(.serverResponseLost)) { try await a.sync() }
        #expect(try await a.store.pendingChanges().map(\.recordID.recordName) == ["quiet"])
        // The server has it: sent again, it is recognised as this device's own write.
        try await a.sync()
        #expect(try await a.store.pendingChanges().isEmpty)
        #expect(a.recorder.resolutions.isEmpty)
        #expect(try await scenario.serverNotes().keys.sorted() == ["fine", "quiet"])
    }

    @Test(arguments: ScenarioServer.allCases)
    func deletingAGraphParentsFirstReachesTheServerAndTheOtherDevice(server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let (a, client) = try await scenario.flakyDevice(maximumItemsPerRequest: 1)
        let b = try await scenario.device()
        let zone = scenario.zoneID
        let list = TaskList(id: "list", name: "Home")
        let reminder = Reminder(
            id: "reminder", title: "Paint", list: CloudLazyReference(recordID: scenario.recordID("list")))
        let subtask = Subtask(
            id: "subtask", title: "Buy paint", reminder: CloudLazyReference(recordID: scenario.recordID("reminder")))
        let checkpoint = Checkpoint(
            id: "checkpoint", note: "Blue", subtask: CloudLazyReference(recordID: scenario.recordID("subtask")))
        try await a.store.save(list, in: zone)
        try await a.store.save(reminder, in: zone)
        try await a.store.save(subtask, in: zone)
        try await a.store.save(checkpoint, in: zone)
        try await a.sync()
        try await b.sync()
        #expect(try await b.store.fetch(Checkpoint.self, id: "checkpoint") == checkpoint)

        // Parents first, as a user deletes a list.
        try await a.store.delete(list)
        try await a.store.delete(reminder)
        try await a.store.delete(subtask)
        try await a.store.delete(checkpoint)
        let requestsBefore = await client.requests.count
        try await a.sync()
        #expect(a.recorder.events.allSatisfy { if case .uploadFailed = $0 { false } else { true } })
        #expect(try await a.store.pendingChanges().isEmpty)
        // Holders before what they hold: one request each, none refused.
        #expect(
            await Array(client.requests.dropFirst(requestsBefore))
                == ["checkpoint", "subtask", "reminder", "list"].map { [scenario.recordID($0)] })
        let types = ["TaskList", "Reminder", "Subtask", "Checkpoint"]
        #expect(try await scenario.serverRecords(ofTypes: types).isEmpty)
        try await b.sync()
        #expect(try await b.store.fetch(TaskList.self, id: "list") == nil)
        #expect(try await b.store.fetch(Checkpoint.self, id: "checkpoint") == nil)
    }

    @Test func deletionsAreOrderedHoldersFirstAcrossTheQueueAndACycleIsBrokenAtItsOldest() {
        let zone = SyncStore.defaultZoneID
        func key(_ name: String) -> UploadKey {
            UploadKey(id: CloudRecord.ID(recordName: name, zoneID: zone), version: 1)
        }
        func pending(_ names: [String]) -> [DeletionOrder.Pending] {
            names.enumerated().map { DeletionOrder.Pending(key: key($1), sequence: Int64($0)) }
        }
        // c → b → a (c holds b, b holds a), queued a, b, c; d holds nothing.
        let chain: [UploadKey: [CloudRecord.ID]] = [key("b"): [key("a").id], key("c"): [key("b").id, key("x").id]]
        #expect(
            DeletionOrder.sorted(pending(["a", "d", "b", "c"]), references: chain) == ["d", "c", "b", "a"].map(key))
        // x ↔ y: broken at x, the oldest of the cycle; z, older but outside it, waits for y, which holds it.
        let cycle: [UploadKey: [CloudRecord.ID]] = [
            key("x"): [key("y").id], key("y"): [key("x").id, key("z").id], key("w"): [key("w").id],
        ]
        #expect(
            DeletionOrder.sorted(pending(["z", "x", "y", "w"]), references: cycle) == ["w", "x", "y", "z"].map(key))
    }
}

/// A list of reminders, each with subtasks, each with checkpoints: every level holds a `.validate` reference to the
/// one above, so the server refuses to delete a record something still points to.
struct TaskList: CKCodable, Identifiable, Equatable, Sendable {
    var id: String
    var name: String
}

struct Reminder: CKCodable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var list: CloudLazyReference<TaskList>

    static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, referenceActions: [.list: .validate])
}

struct Subtask: CKCodable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var reminder: CloudLazyReference<Reminder>

    static let cloudKitFieldOptions = CloudFieldOptions(
        keyedBy: CodingKeys.self, referenceActions: [.reminder: .validate])
}

struct Checkpoint: CKCodable, Identifiable, Equatable, Sendable {
    var id: String
    var note: String
    var subtask: CloudLazyReference<Subtask>

    static let cloudKitFieldOptions = CloudFieldOptions(
        keyedBy: CodingKeys.self, referenceActions: [.subtask: .validate])
}
