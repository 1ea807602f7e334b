import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import NestedCloudKitRules
import NestedCloudKitSQLite
import NestedCloudKitServer
import TestSupport
import Testing

/// The seven operation types of Web Services' `records/modify`, as the rules engine applies them, checked against
/// every backend that stores records itself: the emulator serves the endpoint through them.
@Suite("Record operations conformance")
struct RecordOperationConformanceTests {
    static let storingBackends: [DatabaseBackend] = [.inMemory, .sqlite]
    private let zone = CloudRecord.ZoneID(zoneName: "Lists")

    @Test(arguments: storingBackends)
    func createRefusesARecordThatExists(backend: DatabaseBackend) async throws {
        let database = try await storingDatabase(backend)
        let saved = try await database.save(record("Note", "n", ["text": .string("server")], zone: zone))

        let results = try await database.modifyRecords(
            [.create(record("Note", "n", ["text": .string("client")], zone: zone))], atomically: true, failing: [:])

        guard case .serverRecordChanged(let server, _, let ancestor)? = results.saveResults[saved.id]?.failureKind
        else {
            Issue.record("expected serverRecordChanged, got \(String(describing: results.saveResults[saved.id]))")
            return
        }
        #expect(server == saved)
        #expect(ancestor == nil)
        #expect(try await database.record(for: saved.id) == saved)
    }

    @Test(arguments: storingBackends)
    func updateChangesTheFieldsItNamesOverTheVersionItNames(backend: DatabaseBackend) async throws {
        let database = try await storingDatabase(backend)
        let saved = try await database.save(
            record("Note", "n", ["text": .string("old"), "pages": .int64(3), "kept": .int64(1)], zone: zone))
        var update = record("Note", "n", ["text": .string("new")], zone: zone)
        update.systemFields = saved.systemFields
        update.clearedFieldNames = ["pages"]

        let results = try await database.modifyRecords([.update(update)], atomically: true, failing: [:])

        let stored = try #require(results.saveResults[saved.id]).get()
        #expect(stored.fields == ["text": .string("new"), "kept": .int64(1)])
        #expect(stored.systemFields?.changeTag != saved.systemFields?.changeTag)
        #expect(try await database.record(for: saved.id) == stored)
    }

    @Test(arguments: storingBackends)
    func updateAndReplaceOfAnotherVersionConflictAndChangeNothing(backend: DatabaseBackend) async throws {
        let database = try await storingDatabase(backend)
        let first = try await database.save(record("Note", "n", ["text": .string("first")], zone: zone))
        var second = first
        second.fields["text"] = .string("second")
        let current = try await database.save(second, savePolicy: .ifServerRecordUnchanged)
        var stale = record("Note", "n", ["text": .string("stale")], zone: zone)
        stale.systemFields = first.systemFields

        for operation in [CloudRecordOperation.update(stale), .replace(stale)] {
            let results = try await database.modifyRecords([operation], atomically: true, failing: [:])
            guard case .serverRecordChanged(let server, let client, _)? = results.saveResults[first.id]?.failureKind
            else {
                Issue.record("\(operation): expected serverRecordChanged, got \(String(describing: results))")
                continue
            }
            #expect(server == current)
            #expect(client.fields == stale.fields)
        }
        #expect(try await database.record(for: first.id) == current)
    }

    @Test(arguments: storingBackends)
    func updateOfARecordThatDoesntExistIsUnknown(backend: DatabaseBackend) async throws {
        let database = try await storingDatabase(backend)
        var missing = record("Note", "gone", ["text": .string("x")], zone: zone)
        missing.systemFields = CloudRecord.SystemFields(changeTag: "1")

        let results = try await database.modifyRecords([.update(missing)], atomically: true, failing: [:])

        #expect(results.saveResults[missing.id]?.failureOrNil == .unknownItem(missing.id))
    }

    @Test(arguments: storingBackends)
    func forcedOperationsIgnoreTheVersionAndCreateWhatIsMissing(backend: DatabaseBackend) async throws {
        let database = try await storingDatabase(backend)
        let saved = try await database.save(
            record("Note", "n", ["text": .string("old"), "kept": .int64(1)], zone: zone))
        let changes = record("Note", "n", ["text": .string("forced")], zone: zone)

        let updated = try #require(
            try await database.modifyRecords([.forceUpdate(changes)], atomically: true, failing: [:])
                .saveResults[saved.id]
        ).get()
        #expect(updated.fields == ["text": .string("forced"), "kept": .int64(1)])

        let replaced = try #require(
            try await database.modifyRecords([.forceReplace(changes)], atomically: true, failing: [:])
                .saveResults[saved.id]
        ).get()
        #expect(replaced.fields == ["text": .string("forced")])

        let new = record("Note", "new", ["text": .string("made")], zone: zone)
        let created = try #require(
            try await database.modifyRecords([.forceUpdate(new)], atomically: true, failing: [:]).saveResults[new.id]
        ).get()
        #expect(created.fields == new.fields)
    }

    @Test(arguments: storingBackends)
    func deleteChecksTheChangeTagItSends(backend: DatabaseBackend) async throws {
        let database = try await storingDatabase(backend)
        let saved = try await database.save(record("Note", "n", ["text": .string("x")], zone: zone))

        let stale = try await database.modifyRecords(
            [.delete(saved.id, changeTag: "not-the-servers")], atomically: true, failing: [:])
        guard case .serverRecordChanged(let server, let client, _)? = stale.deleteResults[saved.id]?.failureKind
        else {
            Issue.record("expected serverRecordChanged, got \(String(describing: stale.deleteResults[saved.id]))")
            return
        }
        #expect(server == saved)
        #expect(client.systemFields?.changeTag == "not-the-servers")
        #expect(try await database.record(for: saved.id) == saved)

        let current = try await database.modifyRecords(
            [.delete(saved.id, changeTag: saved.systemFields?.changeTag)], atomically: true, failing: [:])
        #expect(current.deleteResults[saved.id]?.succeeded == true)
        #expect(
            try await database.records(for: [saved.id], desiredKeys: nil)[saved.id]?.failureOrNil
                == .unknownItem(saved.id))
    }

    @Test(arguments: storingBackends)
    func anItemTheCallerFailedFailsItsZoneWhenAtomic(backend: DatabaseBackend) async throws {
        let database = try await storingDatabase(backend)
        let unreadable = CloudRecord.ID(recordName: "unreadable", zoneID: zone)
        let good = record("Note", "good", ["text": .string("x")], zone: zone)
        let elsewhere = record("Note", "elsewhere", ["text": .string("y")])

        let atomic = try await database.modifyRecords(
            [.create(good), .create(elsewhere)], atomically: true,
            failing: [unreadable: .invalidArguments("unreadable")])

        #expect(atomic.saveResults[good.id]?.failureOrNil == .batchRequestFailed(good.id))
        // The default zone has no atomic changes: its items stand alone.
        #expect(atomic.saveResults[elsewhere.id]?.succeeded == true)
        #expect(atomic.saveResults[unreadable] == nil)

        let separate = try await database.modifyRecords(
            [.create(good)], atomically: false, failing: [unreadable: .invalidArguments("unreadable")])
        #expect(separate.saveResults[good.id]?.succeeded == true)
    }

    private func storingDatabase(_ backend: DatabaseBackend) async throws -> any CloudRecordStoringDatabase {
        let database = try #require(try await backend.makeDatabase() as? any CloudRecordStoringDatabase)
        try #require(try await database.modifyRecordZones(saving: [zone], deleting: []).saveResults[zone]).get()
        return database
    }
}
