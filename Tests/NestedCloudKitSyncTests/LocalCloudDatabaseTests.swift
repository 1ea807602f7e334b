import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

@testable import NestedCloudKitSync

/// The store as a `CloudDatabase`: CloudKit's rules for saves and deletes, the store's record standing for the
/// server's.
@Suite("Sync store: the local database keeps CloudKit's rules")
struct LocalCloudDatabaseTests {
    let clock = VirtualCloudClock()

    private func note(_ name: String, _ fields: CloudRecord.Fields, in store: SyncStore) -> CloudRecord {
        record("Note", name, fields, zone: store.zoneID)
    }

    @Test func aRecordReadBeforeItsFirstUploadSavesAgainUnderTheDefaultPolicy() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        let database = store.localDatabase
        _ = try await database.save(note("n", ["title": .string("draft"), "body": .string("b")], in: store))
        var read = try await database.record(for: CloudRecord.ID(recordName: "n", zoneID: store.zoneID))
        // No version yet, but system fields all the same: setting a field to nil is noted as clearing it.
        #expect(read.systemFields == CloudRecord.SystemFields())
        read.fields["title"] = .string("final")
        read["body"] = nil
        #expect(read.clearedFieldNames == ["body"])

        let saved = try await database.save(read)

        #expect(saved.fields == ["title": .string("final")])
        #expect(try await store.record(withID: read.id)?.fields == ["title": .string("final")])
        #expect(try await store.pendingChanges().map(\.recordID.recordName) == ["n"])
    }

    @Test func aNewRecordWhoseIDTheStoreHasConflictsAndChangesNothing() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        let database = store.localDatabase
        let first = try await database.save(note("n", ["title": .string("first")], in: store))
        // A record made anew, not read from the store: under `ifServerRecordUnchanged`, CloudKit refuses it.
        var other = note("n", ["title": .string("other")], in: store)
        other.systemFields = CloudRecord.SystemFields(changeTag: "never-given")

        let results = try await database.modifyRecords(
            saving: [other], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)

        guard case .serverRecordChanged(let server, _, _)? = (results.saveResults[other.id]?.failureKind) else {
            Issue.record("expected serverRecordChanged, got \(String(describing: results.saveResults[other.id]))")
            return
        }
        #expect(server.fields == first.fields)
        #expect(try await store.record(withID: other.id)?.fields == first.fields)
    }

    @Test func aCopyReadBeforeASyncBroughtANewerOneConflictsUnderTheDefaultPolicy() async throws {
        let scenario = Scenario()
        let (a, b) = (try await scenario.device(), try await scenario.device())
        _ = try await a.store.localDatabase.save(
            note("n", ["title": .string("v1"), "body": .string("x")], in: a.store))
        try await a.sync()
        try await b.sync()
        let id = CloudRecord.ID(recordName: "n", zoneID: b.store.zoneID)
        var stale = try await b.store.localDatabase.record(for: id)
        var newer = try await a.store.localDatabase.record(for: id)
        newer.fields["title"] = .string("v2")
        _ = try await a.store.localDatabase.save(newer)
        try await a.sync()
        try await b.sync()
        stale.fields["body"] = .string("y")

        let conflict = try await b.store.localDatabase.modifyRecords(
            saving: [stale], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        guard case .serverRecordChanged(let server, let client, _)? = (conflict.saveResults[id]?.failureKind) else {
            Issue.record("expected serverRecordChanged, got \(String(describing: conflict.saveResults[id]))")
            return
        }
        #expect(server.fields == ["title": .string("v2"), "body": .string("x")])
        #expect(client.fields == stale.fields)
        #expect(try await b.store.pendingChanges().isEmpty)

        // `changedKeys` writes the client's fields over the store's, whatever the version.
        let forced = try await b.store.localDatabase.modifyRecords(
            saving: [stale], deleting: [], savePolicy: .changedKeys, atomically: true)
        #expect(try forced.saveResults[id]?.get().fields == ["title": .string("v1"), "body": .string("y")])
        #expect(try await b.store.pendingChanges().map(\.recordID) == [id])
    }

    @Test func changedKeysAndAllKeysKeepTheFieldsTheClientLacks() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        let database = store.localDatabase
        _ = try await database.save(note("n", ["title": .string("t"), "body": .string("b")], in: store))
        let partial = note("n", ["title": .string("new")], in: store)

        let kept = try await database.modifyRecords(
            saving: [partial], deleting: [], savePolicy: .changedKeys, atomically: true)
        #expect(try kept.saveResults[partial.id]?.get().fields == ["title": .string("new"), "body": .string("b")])

        let all = try await database.modifyRecords(
            saving: [partial], deleting: [], savePolicy: .allKeys, atomically: true)
        #expect(try all.saveResults[partial.id]?.get().fields == ["title": .string("new"), "body": .string("b")])
    }

    @Test func aFailedItemOfAnAtomicRequestFailsItsZoneAndQueuesNothing() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        let database = store.localDatabase
        let good = note("good", ["title": .string("x")], in: store)
        let dangling = note(
            "dangling",
            [
                "owner": .reference(
                    CloudReference(
                        recordID: CloudRecord.ID(recordName: "gone", zoneID: store.zoneID), action: .validate))
            ],
            in: store)

        let atomic = try await database.modifyRecords(
            saving: [good, dangling], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)

        guard case .referenceViolation(let id, _)? = (atomic.saveResults[dangling.id]?.failureKind) else {
            Issue.record("expected referenceViolation, got \(String(describing: atomic.saveResults[dangling.id]))")
            return
        }
        #expect(id == dangling.id)
        #expect(atomic.saveResults[good.id]?.failureOrNil == .batchRequestFailed(good.id))
        #expect(try await store.pendingChanges().isEmpty)

        let separate = try await database.modifyRecords(
            saving: [good, dangling], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: false)
        #expect(separate.saveResults[good.id]?.succeeded == true)
        #expect(try await store.pendingChanges().map(\.recordID) == [good.id])
    }

    @Test func deletingARecordTheStoreLacksIsUnknownAndATargetTakesItsDeleteSelfHolders() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        let database = store.localDatabase
        let list = note("list", ["title": .string("groceries")], in: store)
        let item = note(
            "item", ["list": .reference(CloudReference(recordID: list.id, action: .deleteSelf))], in: store)
        _ = try await database.saveRecords([list, item])
        let missing = CloudRecord.ID(recordName: "missing", zoneID: store.zoneID)

        let results = try await database.modifyRecords(
            saving: [], deleting: [missing, list.id], savePolicy: .ifServerRecordUnchanged, atomically: false)

        #expect(results.deleteResults[missing]?.failureOrNil == .unknownItem(missing))
        #expect(results.deleteResults[list.id]?.succeeded == true)
        #expect(try await store.record(withID: item.id) == nil)
        // Never uploaded, so nothing is left to send.
        #expect(try await store.pendingChanges().isEmpty)
    }

    @Test func requestsOverTheLimitOrNamingARecordTwiceChangeNothing() async throws {
        let store = try SyncStore.inMemory(clock: clock)
        let database = store.localDatabase
        let limit = database.maximumItemsPerRequest
        let many = (0...limit).map { note("n\($0)", [:], in: store) }

        await #expect(throws: CloudDatabaseError.limitExceeded(limit: limit, requested: limit + 1)) {
            try await database.modifyRecords(
                saving: many, deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: false)
        }
        let twice = note("n", [:], in: store)
        await #expect(
            throws: CloudDatabaseError.invalidArguments("the request saves or deletes \(twice.id) more than once")
        ) {
            try await database.modifyRecords(
                saving: [twice], deleting: [twice.id], savePolicy: .ifServerRecordUnchanged, atomically: false)
        }
        #expect(try await store.pendingChanges().isEmpty)
    }
}
