import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitSync

/// The schema a sync store needs in CloudKit: the models', the sync's own fields, and the indexes of its fetches
/// and of the store's indexes. Against the emulator in production on it, devices sync; on the models' schema
/// alone, production refuses the uploads and says which field it lacks.
@Suite("Sync: the schema", .stopsEmulators)
struct SyncSchemaTests {
    @Test func theSyncsFieldsZonesAndIndexesJoinTheModels() throws {
        let schema = try CloudSchema(
            syncing: [Note.self, Chore.self],
            zones: [SyncZone(CloudRecord.ZoneID.default, recordTypes: ["Note"])],
            indexes: Chore.storeIndexes)
        for type in ["Note", "Chore"] {
            #expect(schema[recordType: type]?.fields[SyncMetadataFields.editTime] == .init(.init(.int64)))
            #expect(schema[recordType: type]?.fields[SyncMetadataFields.fieldEditTimes] == .init(.init(.string)))
        }
        // The default zone has no change tokens: it is fetched by modification date, then by record name.
        #expect(schema[recordType: "Note"]?.fields["___modTime"]?.indexes == [.queryable, .sortable])
        #expect(schema[recordType: "Note"]?.fields["___recordID"]?.indexes == .queryable)
        #expect(schema[recordType: "Chore"]?.fields["___modTime"]?.indexes == [])
        // The store's indexes: each column filtered and sorted, as far as CloudKit allows.
        let indexed = try #require(schema[recordType: "Chore"]).fields.filter { !$0.value.indexes.isEmpty }
        #expect(
            indexed.mapValues(\.indexes) == [
                "isDone": [.queryable, .sortable], "priority": [.queryable, .sortable],
                "___createTime": [.queryable, .sortable],
            ])
        let unknown = try #require(throws: CloudSchemaError.self) {
            try CloudSchema(syncing: [Note.self], indexes: Chore.storeIndexes)
        }
        #expect(unknown.code == .unknownField)
    }

    @Test func devicesSyncThroughProductionOnTheSyncsSchema() async throws {
        // The test reads the server's notes with a query without a filter, which needs ___recordID QUERYABLE.
        let scenario = try await EmulatorScenario.start(
            schema: try CloudSchema(syncing: [Note.self], queries: [CloudQuery(recordType: "Note")]))
        let phone = try await scenario.device()
        let laptop = try await scenario.device()
        try await phone.store.save(Note(id: "n", title: "Groceries", body: "milk"))
        try await phone.sync()
        try await laptop.sync()
        #expect(try await laptop.store.fetch(Note.self, id: "n") == Note(id: "n", title: "Groceries", body: "milk"))
        #expect(try await scenario.serverNotes() == ["n": Note(id: "n", title: "Groceries", body: "milk")])
    }

    @Test func productionWithoutTheSyncsFieldsRefusesTheUploadAndSaysWhichField() async throws {
        let scenario = try await EmulatorScenario.start(
            schema: try CloudSchema(models: [Note.self], queries: [CloudQuery(recordType: "Note")]))
        let phone = try await scenario.device()
        try await phone.store.save(Note(id: "n", title: "Groceries", body: "milk"))
        try? await phone.sync()
        let failures = phone.recorder.events.compactMap { event -> String? in
            if case .uploadFailed(_, let error, _) = event { return "\(error)" }
            return nil
        }
        #expect(
            failures.contains {
                $0.contains("Cannot create new field '\(SyncMetadataFields.editTime)' in production schema")
            },
            "\(phone.recorder.events)")
        // Nothing reached the server, and the change waits in the queue.
        #expect(try await scenario.serverNotes().isEmpty)
        #expect(try await phone.store.pendingChanges().count == 1)
    }

    /// A photo whose file is declared an asset: the schema can type it without a sample.
    struct DeclaredPhoto: CKCodable, Identifiable, Equatable, Sendable {
        var id: String
        var caption: String
        var image: URL
        static var cloudKitFieldOptions: CloudFieldOptions { CloudFieldOptions(assetFields: ["image"]) }
    }

    @Test func aURLFieldIsNeverGuessedAndOnceDeclaredProductionTakesTheFile() async throws {
        // `Photo.image` holds a file, but nothing says so: a guess of STRING is what production would refuse.
        let undeclared = try #require(throws: CloudSchemaError.self) { try CloudSchema(syncing: [Photo.self]) }
        #expect(undeclared.recordType == "Photo" && undeclared.field == "image")

        let scenario = try await EmulatorScenario.start(
            schema: try CloudSchema(syncing: [DeclaredPhoto.self], queries: [CloudQuery(recordType: "DeclaredPhoto")]))
        let deployed = try await scenario.emulator.schema(container: EmulatorScenario.container)
        #expect(deployed[recordType: "DeclaredPhoto"]?.fields["image"] == .init(.init(.asset)))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("photo-\(UUID().uuidString).png")
        try Data("pixels".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let phone = try await scenario.device()
        try await phone.store.save(DeclaredPhoto(id: "p", caption: "beach", image: file))
        try await phone.sync()
        #expect(try await phone.store.pendingChanges().isEmpty)
        #expect(phone.recorder.events.allSatisfy { if case .uploadFailed = $0 { false } else { true } })
        let server = try await scenario.serverRecords(ofTypes: ["DeclaredPhoto"])
        #expect(server.map(\.id.recordName) == ["p"])
        #expect(server.first?["image"].map { if case .asset = $0 { true } else { false } } == true)
    }
}
