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
        #expect(unknown.code == .unknownField(recordType: "Chore", field: Chore.storeIndexes[0].name))
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
}
