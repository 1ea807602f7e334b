import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitSQLite
import NestedCloudKitServer
import Testing

@testable import NestedCloudKitSync

/// A store file written by the release before the app-database layout (`Fixtures/store-v2.sqlite`: two notes, a
/// school with its director and a student, synced; then an edit of a synced note, a new note and a deletion,
/// pending) opens in this one with its queue, tokens and ancestors intact.
@Suite("Store: files of earlier layouts")
struct StoreMigrationTests {
    private static func copyOfFixture() throws -> (path: String, directory: URL) {
        let fixture = try #require(
            Bundle.module.url(forResource: "store-v2", withExtension: "sqlite", subdirectory: "Fixtures"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("migration-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("store.sqlite").path
        try FileManager.default.copyItem(atPath: fixture.path, toPath: path)
        return (path, directory)
    }

    @Test func aStoreOfTheSecondLayoutOpensWithEverythingItHeld() async throws {
        let (path, directory) = try Self.copyOfFixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = VirtualCloudClock(start: Date(timeIntervalSince1970: 1_700_000_120))
        let store = try SyncStore(path: path, clock: clock)
        // Pending changes, in their order, as the earlier release queued them.
        let pending = try await store.pendingChanges()
        #expect(pending.map(\.recordID.recordName) == ["synced", "new", "p1"])
        #expect(pending.map(\.operation) == [.save, .save, .delete])
        // Models read back, edits included.
        #expect(try await store.fetch(Note.self, id: "synced")?.title == "Synced, then edited")
        #expect(try await store.fetch(Note.self, id: "new") == Note(id: "new", title: "Not sent yet", body: "é ✓"))
        // The school's student was deleted (pending): the school's record still names it, the director is there.
        #expect(try await store.fetch(Person.self, id: "d1")?.name == "Ada")
        #expect(try await store.fetch(Person.self, id: "p1") == nil)
        let school = try #require(
            try await store.record(withID: CloudRecord.ID(recordName: "s1", zoneID: store.zoneID)))
        #expect(school["name"] == .string("Hill"))
        // Tokens and the account kept; every row in the new form, fields queryable.
        let state = try await store.read { db in
            (
                try Data.fetchOne(db, sql: "SELECT value FROM ncs_state WHERE key = 'databaseToken'"),
                try Data.fetchOne(db, sql: "SELECT token FROM ncs_zone"),
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM ncs_record WHERE hex(substr(record, 1, 1)) <> ?",
                    arguments: [String(RecordCoding.version, radix: 16, uppercase: true)]),
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ncs_record WHERE ancestor_tag IS NOT NULL")
            )
        }
        #expect(state.0 != nil && state.1 != nil)
        #expect(state.2 == 0)
        #expect(state.3 == 3)
        #expect(try await store.ledger.syncedUserRecordName() == InMemoryCloudDatabase.defaultUserRecordName)
        let pinned = try await store.fetch(
            ModelQuery(QueryableNote.self).recordType("Note").filter(.equals(.pinned, true)))
        #expect(pinned.map(\.id) == ["synced"])
        // The ancestor of the edited note is the server's copy: its change tag is the one a save is checked with.
        let stored = try await store.read { db in
            try StoreTables.record(CloudRecord.ID(recordName: "synced", zoneID: store.zoneID), in: db)
        }
        #expect(stored?.ancestor?["title"] == .string("Synced"))
        #expect(stored?.ancestor?.systemFields?.changeTag != nil)
        try await store.close()
    }
}

/// `Note` with the coding keys a query names.
struct QueryableNote: CKCodable, Identifiable, Sendable, QueryableModel {
    var id: String
    var title: String
    var body: String
    var pinned: Bool
    var cloudKitRecordType: String { "Note" }

    enum CodingKeys: String, CodingKey { case id, title, body, pinned }
}

/// A store file of the sixth layout (`Fixtures/store-v6`, written by ``StoreFixtureWriter`` with the code of that
/// layout) and the SQLite server it synced with: opened in this layout, its records are in their types' tables, and
/// it syncs on where it was, sending its pending changes and nothing else.
@Suite("Store: a file of the sixth layout, on its server")
struct StoreSixthLayoutTests {
    @Test func itOpensInTablesAndSyncsOnSendingOnlyWhatWasPending() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("migration-v6-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for file in ["store", "server"] {
            let fixture = try #require(
                Bundle.module.url(forResource: file, withExtension: "sqlite", subdirectory: "Fixtures/store-v6"))
            try FileManager.default.copyItem(
                atPath: fixture.path, toPath: directory.appendingPathComponent("\(file).sqlite").path)
        }
        let clock = VirtualCloudClock(start: Date(timeIntervalSince1970: 1_790_001_000))
        let server = try SQLiteCloudDatabase(path: directory.appendingPathComponent("server.sqlite").path, clock: clock)
        let client = FlakyDatabase(server)
        let store = try SyncStore(path: directory.appendingPathComponent("store.sqlite").path, clock: clock)
        let zone = store.zoneID

        // Every record in its table, the newer version's field in a column of its own.
        let rows = try await store.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT quote(_record_name), quote(title), quote(color), quote(_inexact)
                    FROM "Note" ORDER BY _record_name
                    """
            ).map { row in (0..<4).map { row[$0] as String } }
        }
        let expectedRows: [[String]] = [
            ["'n-new'", "'Not sent yet'", "NULL", "0"], ["'n1'", "'Note 1, newer'", "'teal'", "0"],
            ["'n3'", "'Note 3'", "NULL", "0"], ["'n4'", "'Note 4'", "NULL", "0"],
        ]
        #expect(rows == expectedRows)
        #expect(
            try await store.fetch(Note.self, id: "n1") == Note(id: "n1", title: "Note 1, newer", body: "edited offline")
        )
        #expect(try await store.pendingChanges().map(\.recordID.recordName) == ["n1", "n2", "n-new"])
        // Queued before the store kept the time: unknown, not guessed.
        #expect(try await store.pendingChanges().map(\.queuedAt) == [nil, nil, nil])
        #expect(try await store.skippedRecords().map(\.recordID.recordName) == ["hidden"])
        #expect(try await store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ncs_server_copy") } == 3)

        let engine = SyncEngine(
            store: store, database: client, configuration: SyncConfiguration(retry: SyncRetryPolicy(jitter: 0)))
        try await engine.sync()
        let pending = Set(["n1", "n2", "n-new"].map { CloudRecord.ID(recordName: $0, zoneID: zone) })
        // The saves in one request, the deletion in another: each pending change once, nothing else.
        let sent = await client.requests.flatMap { $0 }
        #expect(sent.count == pending.count)
        #expect(Set(sent) == pending)
        let requestsMade = await client.requests.count
        let onServer = try await server.records(
            for: ["n1", "n2", "n-new"].map { CloudRecord.ID(recordName: $0, zoneID: zone) }, desiredKeys: nil)
        let n1 = try #require(try onServer[CloudRecord.ID(recordName: "n1", zoneID: zone)]?.get())
        // The edit of a version that doesn't know `color` kept it.
        #expect(n1["body"] == .string("edited offline"))
        #expect(n1["color"] == .string("teal"))
        #expect(throws: CloudDatabaseError.self) {
            try onServer[CloudRecord.ID(recordName: "n2", zoneID: zone)]?.get()
        }
        #expect(
            try onServer[CloudRecord.ID(recordName: "n-new", zoneID: zone)]?.get()["title"] == .string("Not sent yet"))
        #expect(try await store.pendingChanges().isEmpty)
        #expect(try await store.skippedRecords().map(\.recordID.recordName) == ["hidden"])

        // Nothing is left to send: the next sync sends nothing.
        try await engine.sync()
        #expect(await client.requests.count == requestsMade)
        try await store.close()
        try server.close()
    }
}
