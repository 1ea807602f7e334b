import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

@testable import NestedCloudKitSync

/// Two versions of an app on two devices of one user: version 2 added a field to a record type that version 1
/// doesn't know. Whatever either version writes, under every conflict policy and on every server that stores
/// records, nothing the other wrote is lost: version 1's saves keep the field they don't map, and send only what
/// they changed.
@Suite("Sync: two app versions on two devices", .stopsEmulators)
struct VersionSkewTests {
    /// Version 1's model of a note.
    struct NoteV1: CKCodable, Identifiable, Equatable, Sendable {
        var id: String
        var title: String
        var body: String?
        var cloudKitRecordType: String { "Note" }
    }

    /// Version 2's: one more field.
    struct NoteV2: CKCodable, Identifiable, Equatable, Sendable {
        var id: String
        var title: String
        var body: String?
        var color: String?
        var cloudKitRecordType: String { "Note" }
    }

    static let policies: [ConflictPolicy] = [.fieldByField, .clientWins, .newestEditWins, .serverWins]

    /// The server's note `n`, field by field, without the engine's fields.
    func serverNote(_ scenario: any DeviceScenario) async throws -> CloudRecord.Fields {
        let record = try #require(try await scenario.serverRecords(ofTypes: ["Note"]).first { $0.id.recordName == "n" })
        return SyncMetadataFields.split(record).record.fields
    }

    /// Version 2 writes a note with a color; version 1, after a sync, retitles it and clears its body; then
    /// version 2 reads it back.
    func anOlderVersionsSaveKeepsTheNewerVersionsField(on server: ScenarioServer, policy: ConflictPolicy)
        async throws
    {
        let scenario = try await server.scenario()
        let newer = try await scenario.device(Scenario.configuration(policy))
        let older = try await scenario.device(Scenario.configuration(policy))
        try await newer.store.save(NoteV2(id: "n", title: "Groceries", body: "milk", color: "red"))
        try await newer.sync()
        try await older.sync()

        var note = try #require(try await older.store.fetch(NoteV1.self, id: "n"))
        note.title = "Shopping"
        note.body = nil
        try await older.store.save(note)
        // Locally too: the store keeps the field version 1 doesn't map.
        #expect(try await older.store.record(withID: scenario.recordID("n"))?["color"] == .string("red"))
        try await older.sync()
        try await newer.sync()

        #expect(
            try await serverNote(scenario) == [
                "id": .string("n"), "title": .string("Shopping"), "color": .string("red"),
            ])
        #expect(
            try await newer.store.fetch(NoteV2.self, id: "n")
                == NoteV2(id: "n", title: "Shopping", body: nil, color: "red"))
        #expect(older.recorder.resolutions.isEmpty && newer.recorder.resolutions.isEmpty)
    }

    /// Both versions edit offline, version 2 the field version 1 doesn't know, version 1 the title ten seconds
    /// later; version 2 syncs first, so version 1's sync meets a conflict. Version 2's color survives every
    /// policy; version 1's title survives every policy but the one that drops a local change whole.
    func concurrentEditsOfBothVersionsMerge(on server: ScenarioServer, policy: ConflictPolicy) async throws {
        let scenario = try await server.scenario()
        let newer = try await scenario.device(Scenario.configuration(policy))
        let older = try await scenario.device(Scenario.configuration(policy))
        try await newer.store.save(NoteV2(id: "n", title: "Groceries", body: "milk", color: "red"))
        try await newer.sync()
        try await older.sync()

        try await newer.store.update(NoteV2.self, id: "n") { $0.color = "blue" }
        scenario.clock.advance(by: .seconds(10))
        try await older.store.update(NoteV1.self, id: "n") { $0.title = "Shopping" }
        try await newer.sync()
        try await older.sync()
        try await newer.sync()

        let keepsLocalChange: Bool
        if case .serverWins = policy { keepsLocalChange = false } else { keepsLocalChange = true }
        let title = keepsLocalChange ? "Shopping" : "Groceries"
        #expect(
            try await serverNote(scenario)
                == ["id": .string("n"), "title": .string(title), "body": .string("milk"), "color": .string("blue")])
        #expect(
            try await newer.store.fetch(NoteV2.self, id: "n")
                == NoteV2(id: "n", title: title, body: "milk", color: "blue"))
        #expect(try await older.store.fetch(NoteV1.self, id: "n")?.title == title)
        #expect(try await older.store.record(withID: scenario.recordID("n"))?["color"] == .string("blue"))
        #expect(older.recorder.resolutions.count == 1)
    }

    @Test(arguments: ScenarioServer.storing, policies)
    func anOlderVersionsSaveKeepsTheNewerVersionsField(server: ScenarioServer, policy: ConflictPolicy) async throws {
        try await anOlderVersionsSaveKeepsTheNewerVersionsField(on: server, policy: policy)
    }

    @Test(arguments: ScenarioServer.storing, policies)
    func concurrentEditsOfBothVersionsMerge(server: ScenarioServer, policy: ConflictPolicy) async throws {
        try await concurrentEditsOfBothVersionsMerge(on: server, policy: policy)
    }

    @Test func aStoreSaveOfAModelClearsWhatItMapsAndKeepsWhatItDoesnt() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(NoteV2(id: "n", title: "t", body: "b", color: "red"))
        try await store.save(NoteV1(id: "n", title: "t", body: nil))
        let record = try #require(try await store.record(withID: CloudRecord.ID(recordName: "n", zoneID: store.zoneID)))
        #expect(record.fields == ["id": .string("n"), "title": .string("t"), "color": .string("red")])
        // A save of records, unlike a model's, is the whole record: what it doesn't hold is cleared.
        var replaced = record
        replaced.fields = ["id": .string("n"), "title": .string("t")]
        try await store.save([replaced])
        #expect(try await store.record(withID: record.id)?.fields == ["id": .string("n"), "title": .string("t")])
    }

    /// A task whose `due` field changed meaning in layout version 2 (from a day to a time), which version 1 must
    /// not write over.
    struct TaskV1: CKCodable, Identifiable, Equatable, Sendable {
        var id: String
        var due: Double
        var cloudKitRecordType: String { "Task" }
        static var cloudKitSchemaVersion: Int { 1 }
    }

    struct TaskV2: CKCodable, Identifiable, Equatable, Sendable {
        var id: String
        var due: Double
        var cloudKitRecordType: String { "Task" }
        static var cloudKitSchemaVersion: Int { 2 }
    }

    @Test func aRecordANewerLayoutWroteStaysIntactAgainstAnOlderVersionsSave() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(TaskV1(id: "t", due: 3))
        try await store.save(TaskV2(id: "t", due: 1_700_000_000))
        let id = CloudRecord.ID(recordName: "t", zoneID: store.zoneID)
        let refusal = SyncError.recordFromNewerVersion(id, recordVersion: 2, modelVersion: 1)
        await #expect(throws: refusal) { try await store.save(TaskV1(id: "t", due: 4)) }
        await #expect(throws: refusal) { try await store.update(TaskV1.self, id: "t") { $0.due = 4 } }
        #expect(try await store.record(withID: id)?.schemaVersion == 2)
        #expect(try await store.fetch(TaskV2.self, id: "t")?.due == 1_700_000_000)
        // The newer version goes on writing it.
        try await store.update(TaskV2.self, id: "t") { $0.due += 60 }
        #expect(try await store.fetch(TaskV2.self, id: "t")?.due == 1_700_000_060)
        #expect(refusal.description.contains("update the app"))
    }

    /// The first release's task, before any layout version was declared: at version 0.
    struct TaskV0: CKCodable, Identifiable, Equatable, Sendable {
        var id: String
        var due: Double
        var cloudKitRecordType: String { "Task" }
    }

    @Test func aModelThatDeclaresNoVersionIsAtZeroAndTheRefusalSaysSo() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(TaskV0(id: "t", due: 3))
        #expect(
            try await store.record(withID: CloudRecord.ID(recordName: "t", zoneID: store.zoneID))?.schemaVersion == nil)
        try await store.save(TaskV1(id: "t", due: 1_700_000_000))
        let refusal = SyncError.recordFromNewerVersion(
            CloudRecord.ID(recordName: "t", zoneID: store.zoneID), recordVersion: 1, modelVersion: 0)
        await #expect(throws: refusal) { try await store.save(TaskV0(id: "t", due: 4)) }
        #expect(refusal.description.contains("newer than this app's model, which declares no version (0)"))
        #expect(
            SyncError.recordFromNewerVersion(CloudRecord.ID(recordName: "t"), recordVersion: 2, modelVersion: 1)
                .description.contains("newer than this app's version 1"))
    }

    @Test func anUploadSendsOnlyWhatChanged() async throws {
        let scenario = Scenario()
        let sent = SentRecords(base: scenario.server)
        let device = try await Device(server: sent, clock: scenario.clock)
        try await device.store.save(NoteV2(id: "n", title: "Groceries", body: "milk", color: "red"))
        try await device.sync()
        try await device.store.update(NoteV2.self, id: "n") { $0.title = "Shopping" }
        try await device.sync()
        let second = try #require(await sent.records.last)
        #expect(
            Set(second.fields.names)
                == ["title", SyncMetadataFields.editTime, SyncMetadataFields.fieldEditTimes])
        // The server holds the whole record, and so does the store's copy of it.
        #expect(
            try await serverNote(scenario)
                == ["id": .string("n"), "title": .string("Shopping"), "body": .string("milk"), "color": .string("red")])
        let stored = try await device.store.record(withID: scenario.recordID("n"))
        #expect(stored?["body"] == .string("milk") && stored?["color"] == .string("red"))
    }
}

/// A server that notes every record saved to it, as sent.
private actor SentRecords: ForwardingCloudDatabase {
    let base: InMemoryCloudDatabase
    private(set) var records: [CloudRecord] = []

    init(base: InMemoryCloudDatabase) { self.base = base }

    func modifyRecords(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy, atomically: Bool
    ) async throws -> CloudModifyResults {
        records += recordsToSave
        return try await base.modifyRecords(
            saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically)
    }
}
