import Foundation
import NestedCloudKitCodable
import NestedCloudKitMacros
import NestedCloudKitSQLite
import NestedCloudKitServer
import NestedCloudKitSync
import Observation
import Testing

// This target compiles as a new Xcode 26 app target does: default actor isolation `MainActor`, with the upcoming
// features `InferIsolatedConformances` and `NonisolatedNonsendingByDefault` (Package.swift). Every type here that
// says nothing else is isolated to the main actor, and so would be its conformances, but a model that declares
// `CKCodable` (which refines `SendableMetatype`) where it is declared isn't: it is used below, declared exactly as
// the README and the articles declare models, with no `nonisolated`, through every documented API. If this target
// compiles, an app's models do.

// MARK: Models, as the README declares them

struct Person: CKCodable, Identifiable, Equatable {
    var id: String
    var name: String
    var birthDate: Date
    var picture: Data?
}

struct Book: CKCodable, Identifiable, Equatable {
    var id: String
    var title: String
    var pages: Int
}

struct School: CKCodable, Identifiable, Equatable {
    var id: String
    var name: String
    var location: CloudLocation
    var director: Person
    var students: [Person]
    var books: [Book]

    static let cloudKitFieldOptions = CloudFieldOptions(
        keyedBy: CodingKeys.self, referenceActions: [.director: .validate])
}

struct Folder: CKCodable, Identifiable, Equatable {
    var id: String
    var name: String
}

struct Tag: CKCodable, Identifiable, Equatable {
    var id: String
    var label: String
}

struct Note: CKCodable, Identifiable, QueryableModel, Equatable {
    var id: String
    var title: String
    var isDone: Bool
    var tags: [String]

    enum CodingKeys: String, CodingKey { case id, title, isDone, tags }
    static let storeIndexes = [StoreIndex(Note.self, on: [.key(.isDone), .creationDate])]
}

struct ShoppingList: CKCodable, Identifiable, Equatable {
    var id: String
    var name: String
}

struct Item: CKCodable, Identifiable, Equatable {
    var id: String
    var name: String
    var list: CloudLazyReference<ShoppingList>?
    static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, parent: .list)
}

@CloudRecord
struct Album: CKCodable, Identifiable, Equatable {
    var id: String
    @CloudField(name: "title") var name: String
    @CloudField(reference: .deleteSelf) var owner: Person
    @CloudField(asset: true) var cover: Data
    @CloudField(encrypted: true) var notes: String
    @CloudIgnored var isExpanded = false
}

/// A view model an app keeps on the main actor, holding models: models cross into it and out of it freely.
@Observable
final class Library {
    var schools: [School] = []
    var openNotes: [Note] = []
}

// MARK: Every documented API, from the main actor

// The suite itself is scaffolding, not app code: Swift Testing's macros emit test records that a main-actor default
// would isolate (and can't then be compile-time constants), so the suite is `nonisolated` and each test says
// `@MainActor`, which is where an app's views and view models call the package from.
@Suite("An app target as Xcode 26 makes it")
nonisolated struct AppTargetTests {
    static let zone = CloudRecord.ZoneID(zoneName: "School")
    static let born = Date(timeIntervalSince1970: 946_684_800)

    static func school() -> School {
        let director = Person(id: "d", name: "Ana", birthDate: born)
        return School(
            id: "s", name: "North", location: CloudLocation(latitude: 48.85, longitude: 2.35), director: director,
            students: [Person(id: "p1", name: "Bo", birthDate: born, picture: Data([1, 2]))],
            books: [Book(id: "b1", title: "Swift", pages: 300)])
    }

    @MainActor @Test func modelsEncodeAndDecodeAgainstADatabase() async throws {
        let database = InMemoryCloudDatabase()
        _ = try await database.modifyRecordZones(saving: [Self.zone], deleting: [])
        let records = try CKRecordEncoder(zoneID: Self.zone).encodeRecords(Self.school())
        #expect(records.last?.id.recordName == "s")
        try await database.saveRecords(records)
        let root = try await database.record(for: CloudRecord.ID(recordName: "s", zoneID: Self.zone))
        let decoded = try await CKRecordDecoder().decode(School.self, from: root, referenceDatabase: database)
        #expect(decoded == Self.school())
        let byID = try await CKRecordDecoder().decode(School.self, id: "s", zoneID: Self.zone, from: database)
        let library = Library()
        library.schools = [byID]
        #expect(library.schools.first?.students.map(\.name) == ["Bo"])
    }

    @MainActor @Test func aGeneratedMappingIsUsedFromTheMainActor() async throws {
        let album = Album(
            id: "a", name: "Summer", owner: Person(id: "o", name: "Cy", birthDate: Self.born), cover: Data([9]),
            notes: "private", isExpanded: true)
        let graph = try CKRecordEncoder().encodeGraph(album)
        #expect(graph.root["title"] == .string("Summer"))
        #expect(graph.root.encryptedFieldNames == ["notes"])
        let decoded = try CKRecordDecoder().decode(Album.self, from: graph)
        #expect(decoded.name == "Summer" && decoded.owner.name == "Cy" && !decoded.isExpanded)
    }

    @MainActor @Test func theStoreSavesFetchesQueriesAndUpdatesPlainModels() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Folder(id: "f", name: "Inbox"))
        try await store.save(Tag(id: "t", label: "home"))
        try await store.save(Self.school())
        #expect(try await store.fetchAll(Folder.self) == [Folder(id: "f", name: "Inbox")])
        #expect(try await store.fetch(Tag.self, id: "t")?.label == "home")
        #expect(try await store.fetch(School.self, id: "s") == Self.school())

        try await store.declareIndexes(for: [Note.self])
        for (index, title) in ["Buy milk", "Call Ana", "Buy bread"].enumerated() {
            try await store.save(Note(id: "n\(index)", title: title, isDone: index == 1, tags: ["home"]))
        }
        let open = ModelQuery(Note.self).filter(.equals(.isDone, false) && .beginsWith(.title, "Buy"))
        #expect(try await store.fetch(open).map(\.id) == ["n0", "n2"])
        #expect(try await store.count(open) == 2)
        try await store.update(Note.self, id: "n0") { $0.isDone = true }
        #expect(try await store.fetch(open).map(\.id) == ["n2"])

        var results = store.observe(open).makeAsyncIterator()
        #expect(try await results.next()?.map(\.id) == ["n2"])
        try await store.update(Note.self, id: "n2") { $0.isDone = true }
        #expect(try await results.next()?.isEmpty == true)
        var tag = store.observe(Tag.self, id: "t").makeAsyncIterator()
        #expect(try await tag.next()??.label == "home")
    }

    @MainActor @Test func theObservableObjectsFollowTheStoreMadeBeforeTheyHaveOne() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Note(id: "n1", title: "Buy milk", isDone: false, tags: []))
        let query = ModelQuery(Note.self).filter(.equals(.isDone, false))
        let notes = ObservedQuery(query)
        let count = ObservedCount(query)
        let note = ObservedModel(Note.self, id: "n1")
        // Read without a store: nothing yet, and no error.
        #expect(notes.models.isEmpty && !notes.isLoaded && notes.error == nil)
        notes.store = store
        count.store = store
        note.store = store
        try await waitUntil { notes.isLoaded && count.isLoaded && note.isLoaded }
        #expect(notes.models.map(\.title) == ["Buy milk"])
        #expect(count.count == 1)
        #expect(note.model?.title == "Buy milk")
        let library = Library()
        library.openNotes = notes.models
        #expect(library.openNotes.count == 1)
    }

    @MainActor @Test func theEngineSyncsAndSharesFromTheMainActor() async throws {
        let server = InMemoryCloudDatabase(userRecordName: "_alice")
        let store = try SyncStore.inMemory()
        let engine = SyncEngine(
            store: store, database: server.privateDatabase(of: "_alice"),
            sharedDatabase: server.sharedDatabase(of: "_alice"))
        let state = ObservedSyncState(engine: engine)
        #expect(state.pendingChanges == 0)
        try await store.save(ShoppingList(id: "groceries", name: "Groceries"))
        try await store.save(
            Item(
                id: "milk", name: "Milk",
                list: CloudLazyReference(recordID: CloudRecord.ID(recordName: "groceries", zoneID: store.zoneID))))
        try await waitUntil { state.pendingChanges == 2 }
        let summary = try await engine.sync()
        #expect(summary.sentSaveCount == 2)
        try await waitUntil {
            state.pendingChanges == 0 && state.lastSuccessfulSync != nil && !state.isSyncing
                && state.accountStatus == .available
        }

        let share = try await engine.share(CloudRecord.ID(recordName: "groceries", zoneID: store.zoneID)) { share in
            share.title = "Groceries"
            try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        }
        _ = try await server.sharedDatabase(of: "_bob").acceptShare(shortGUID: try #require(share.shortGUID))
        try await engine.updateShare(share.id) { $0.removeParticipant(userRecordName: "_bob") }
        try await engine.refreshShare(share.id)
        let stored = try #require(try await store.records(ofType: CloudShare.recordType).first)
        #expect(try CloudShare(record: stored).participants.map(\.userRecordName) == ["_alice"])
        try await engine.stopSharing(share.id)
        await engine.close()
    }

    /// Yields until the condition holds: the observable objects deliver on the main actor after the store's work.
    @MainActor private func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<100_000 where !condition() { await Task.yield() }
        #expect(condition())
    }
}
