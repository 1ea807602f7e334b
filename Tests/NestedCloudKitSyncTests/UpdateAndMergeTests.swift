import Foundation
import GRDB
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitSync

/// Edits made from a model read before another device's change reached the store: only the fields the app changed
/// are the user's edits.
@Suite("Store: updates in place and saves of models read earlier")
struct UpdateAndMergeTests {
    /// Two devices on one server merging field by field, both holding the model after a sync.
    private static func twoDevices(sharing model: some CKEncodable) async throws -> (Scenario, Device, Device) {
        let scenario = Scenario()
        let a = try await scenario.device(Scenario.configuration(.fieldByField))
        let b = try await scenario.device(Scenario.configuration(.fieldByField))
        try await a.store.save(model)
        try await a.sync()
        try await b.sync()
        return (scenario, a, b)
    }

    @Test func anUpdateChangesOnlyTheFieldsItsClosureChanged() async throws {
        let (scenario, a, b) = try await Self.twoDevices(sharing: Note(id: "n", title: "title", body: "body"))
        // B edits the body; A syncs it in, then updates the title from what the store holds now.
        try await b.store.update(Note.self, id: "n") { $0.body = "body by b" }
        try await b.sync()
        scenario.clock.advance(by: .seconds(1))
        try await a.sync()
        let updated = try await a.store.update(Note.self, id: "n") { $0.title = "title by a" }
        #expect(updated == Note(id: "n", title: "title by a", body: "body by b"))
        try await a.sync()
        try await b.sync()
        let both = Note(id: "n", title: "title by a", body: "body by b")
        #expect(await scenario.serverNotes()["n"] == both)
        #expect(try await b.note("n") == both)
        #expect(a.recorder.resolutions.isEmpty && b.recorder.resolutions.isEmpty)
    }

    @Test func anUpdateBeforeTheSyncKeepsTheOtherDevicesChangeToAnotherField() async throws {
        let (scenario, a, b) = try await Self.twoDevices(sharing: Note(id: "n", title: "title", body: "body"))
        try await b.store.update(Note.self, id: "n") { $0.body = "body by b" }
        try await b.sync()
        scenario.clock.advance(by: .seconds(1))
        // A hasn't synced: its update edits the title only, so the merge on upload keeps B's body.
        try await a.store.update(Note.self, id: "n") { $0.title = "title by a" }
        #expect(try await a.store.pendingChanges().count == 1)
        try await a.sync()
        try await b.sync()
        let both = Note(id: "n", title: "title by a", body: "body by b")
        #expect(await scenario.serverNotes()["n"] == both)
        #expect(try await a.note("n") == both)
        #expect(try await b.note("n") == both)
    }

    @Test func anUpdateThatChangesNothingQueuesNothingAndAMissingModelIsAnError() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Note(id: "n", title: "t", body: "b"))
        let before = try await store.pendingChanges()
        try await store.update(Note.self, id: "n") { $0.title = "t" }
        #expect(try await store.pendingChanges() == before)
        await #expect(throws: SyncError.notFound(CloudRecord.ID(recordName: "missing", zoneID: store.zoneID))) {
            try await store.update(Note.self, id: "missing") { $0.title = "x" }
        }
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await store.update(Note.self, id: "n") { _ in throw Refused() } }
        #expect(try await store.fetch(Note.self, id: "n")?.title == "t")
    }

    @Test func aStaleSaveOfAModelWithSystemFieldsMergesAgainstTheVersionItWasReadAt() async throws {
        let (scenario, a, b) = try await Self.twoDevices(sharing: Card(id: "c", front: "front", back: "back"))
        // A's screen reads the card, with its system fields, before B's change arrives.
        var onScreen = try #require(try await a.store.fetch(Card.self, id: "c"))
        #expect(onScreen.systemFields?.changeTag != nil)
        var onB = try #require(try await b.store.fetch(Card.self, id: "c"))
        onB.back = "back by b"
        try await b.store.save(onB)
        try await b.sync()
        scenario.clock.advance(by: .seconds(1))
        try await a.sync()
        // The user edits the front on the screen's copy; its back is the old one, which the user didn't touch.
        onScreen.front = "front by a"
        try await a.store.save(onScreen)
        let local = try #require(try await a.store.fetch(Card.self, id: "c"))
        #expect(local.front == "front by a" && local.back == "back by b")
        try await a.sync()
        try await b.sync()
        let server = try #require(await scenario.server.allRecords.first { $0.recordType == "Card" })
        #expect(server["front"] == .string("front by a") && server["back"] == .string("back by b"))
        #expect(try await b.store.fetch(Card.self, id: "c")?.back == "back by b")
        #expect(try await b.store.fetch(Card.self, id: "c")?.front == "front by a")
    }

    @Test func aStaleSaveThatChangedAFieldTheOtherDeviceChangedTooKeepsTheAppsValue() async throws {
        let (scenario, a, b) = try await Self.twoDevices(sharing: Card(id: "c", front: "front", back: "back"))
        var onScreen = try #require(try await a.store.fetch(Card.self, id: "c"))
        try await b.store.update(Card.self, id: "c") { $0.front = "front by b" }
        try await b.sync()
        scenario.clock.advance(by: .seconds(1))
        try await a.sync()
        onScreen.front = "front by a"
        try await a.store.save(onScreen)
        #expect(try await a.store.fetch(Card.self, id: "c")?.front == "front by a")
        try await a.sync()
        try await b.sync()
        #expect(try await b.store.fetch(Card.self, id: "c")?.front == "front by a")
    }

    @Test func aStaleSaveKeepsTheNewerValueOfAFieldThatHeldALocalEditWhenItWasRead() async throws {
        let (scenario, a, b) = try await Self.twoDevices(sharing: Card(id: "c", front: "front", back: "back"))
        // A edits the front offline; B edits it later and syncs first, so B's front is the newer edit.
        try await a.store.update(Card.self, id: "c") { $0.front = "front by a" }
        scenario.clock.advance(by: .seconds(1))
        try await b.store.update(Card.self, id: "c") { $0.front = "front by b" }
        try await b.sync()
        // A's screen holds the card with A's own pending front; the sync then resolves the front to B's.
        var onScreen = try #require(try await a.store.fetch(Card.self, id: "c"))
        #expect(onScreen.front == "front by a")
        try await a.sync()
        #expect(try await a.store.fetch(Card.self, id: "c")?.front == "front by b")
        // The user changes only the back: the front the screen still shows is what it read, not a new edit.
        onScreen.back = "back by a"
        try await a.store.save(onScreen)
        let saved = try #require(try await a.store.fetch(Card.self, id: "c"))
        #expect(saved.front == "front by b" && saved.back == "back by a")
    }

    @Test func aModelWithoutSystemFieldsReplacesEveryField() async throws {
        let (scenario, a, b) = try await Self.twoDevices(sharing: Note(id: "n", title: "title", body: "body"))
        var onScreen = try #require(try await a.note("n"))
        try await b.store.update(Note.self, id: "n") { $0.body = "body by b" }
        try await b.sync()
        scenario.clock.advance(by: .seconds(1))
        try await a.sync()
        // Documented: without system fields the save can't tell what it read, so every field is the app's.
        onScreen.title = "title by a"
        try await a.store.save(onScreen)
        #expect(try await a.note("n") == Note(id: "n", title: "title by a", body: "body"))
    }

    @Test func theStoreKeepsOnlyTheNewestServerCopies() async throws {
        let scenario = Scenario()
        let a = try await scenario.device(Scenario.configuration(.fieldByField))
        for round in 0..<8 {
            try await a.store.save(Card(id: "c", front: "front \(round)", back: "back"))
            try await a.sync()
        }
        let kept = try await a.store.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ncs_server_copy") ?? -1
        }
        #expect(kept == StoreSchema.keptServerCopies)
        try await a.store.delete(Card.self, id: "c")
        #expect(try await a.store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ncs_server_copy") } == 0)
    }
}
