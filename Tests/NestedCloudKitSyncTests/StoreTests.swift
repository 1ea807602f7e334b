import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

@testable import NestedCloudKitSync

@Suite("Sync store: local saves, reads and the queue")
struct StoreTests {
    let clock = VirtualCloudClock()

    @Test func aSavedModelReadsBackOfflineAndIsQueued() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        let school = School(
            id: "s1", name: "Hill", director: Person(id: "d1", name: "Ada"),
            students: [Person(id: "p1", name: "Bo"), Person(id: "p2", name: "Cy")])
        let ids = try await store.save(school)
        #expect(ids.map(\.recordName) == ["d1", "p1", "p2", "s1"])
        #expect(try await store.fetch(School.self, id: "s1") == school)
        let pending = try await store.pendingChanges()
        #expect(pending.map(\.recordID.recordName) == ["d1", "p1", "p2", "s1"])
        #expect(pending.allSatisfy { $0.operation == .save && !$0.isHalted })
    }

    @Test func savingAnUnchangedValueQueuesNothing() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        try await store.save(Note(id: "n", title: "a", body: "b"))
        try await store.save(Note(id: "n", title: "a", body: "b"))
        #expect(try await store.pendingChanges().count == 1)
    }

    @Test func deletingANeverUploadedRecordLeavesNothingToSend() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        try await store.save(Note(id: "n", title: "a", body: "b"))
        try await store.delete(Note(id: "n", title: "a", body: "b"))
        #expect(try await store.pendingChanges().isEmpty)
        #expect(try await store.note("n") == nil)
    }

    @Test func deletingATargetDeletesItsDeleteSelfHoldersAsTheServerWill() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        let zone = a.store.zoneID
        let target = CloudRecord(recordType: "Folder", id: CloudRecord.ID(recordName: "folder", zoneID: zone))
        let holder = CloudRecord(
            recordType: "File", id: CloudRecord.ID(recordName: "file", zoneID: zone),
            fields: ["folder": .reference(CloudReference(recordID: target.id, action: .deleteSelf))])
        let bystander = CloudRecord(
            recordType: "File", id: CloudRecord.ID(recordName: "link", zoneID: zone),
            fields: ["folder": .reference(CloudReference(recordID: target.id, action: .none))])
        try await a.store.save([target, holder, bystander])
        try await a.sync()
        try await a.store.deleteRecords(withIDs: [target.id])
        #expect(try await a.store.record(withID: holder.id) == nil)
        #expect(try await a.store.record(withID: bystander.id) != nil)
        #expect(
            Set(try await a.store.pendingChanges().map(\.recordID.recordName)) == ["folder", "file"])
        try await a.sync()
        #expect(await scenario.server.allRecords.map(\.id.recordName) == ["link"])
    }

    @Test func recordsReferencingATargetAreFoundWithoutAListLimit() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        let students = (0..<1_000).map { Person(id: "p\($0)", name: "Student \($0)") }
        try await store.save(School(id: "s", name: "Big", director: Person(id: "d", name: "D"), students: students))
        let schoolID = CloudRecord.ID(recordName: "s", zoneID: store.zoneID)
        let holders = try await store.records(referencing: CloudRecord.ID(recordName: "p500", zoneID: store.zoneID))
        #expect(holders.map(\.id) == [schoolID])
        let all = try await store.fetchAll(Person.self)
        #expect(all.count == 1_001)
    }

    @Test func theLocalDatabaseAnswersQueries() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        for index in 0..<5 { try await store.save(Note(id: "n\(index)", title: "t\(index % 2)", body: "")) }
        let page = try await store.localDatabase.records(
            matching: CloudQuery(recordType: "Note", predicate: .equals(field: "title", value: .string("t1"))),
            inZoneWith: store.zoneID)
        #expect(page.matchResults.map(\.0.recordName) == ["n1", "n3"])
    }

    @Test func anAssetFileIsKeptByTheStoreAndReachesAnotherDevice() async throws {
        let scenario = Scenario()
        let (a, b) = (try await scenario.device(), try await scenario.device())
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("photo-\(UUID()).jpg")
        try Data([1, 2, 3, 4]).write(to: file)
        try await a.store.save(Photo(id: "p", caption: "beach", image: file))
        // The app's file can go once the save returned: the store has its own copy.
        try FileManager.default.removeItem(at: file)
        let local = try #require(try await a.store.fetch(Photo.self, id: "p"))
        #expect(try Data(contentsOf: local.image) == Data([1, 2, 3, 4]))
        try await a.sync()
        try await b.sync()
        let fetched = try #require(try await b.store.fetch(Photo.self, id: "p"))
        #expect(fetched.caption == "beach")
        #expect(try Data(contentsOf: fetched.image) == Data([1, 2, 3, 4]))
    }

    @Test func aStoreFileKeepsRecordsAndTheQueueAcrossRestarts() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let store = try SyncStore(path: path, clock: clock)
            try await store.save(Note(id: "n", title: "kept", body: ""))
        }
        let reopened = try SyncStore(path: path, clock: clock)
        #expect(try await reopened.note("n")?.title == "kept")
        #expect(try await reopened.pendingChanges().map(\.recordID.recordName) == ["n"])
    }
}

extension SyncStore {
    func note(_ id: String) async throws -> Note? { try await fetch(Note.self, id: id) }
}
