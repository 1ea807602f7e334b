import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import NestedCloudKitEmulator
import NestedCloudKitSQLite
import NestedCloudKitWebServices
import TestSupport
import Testing

/// CloudKit's semantics, checked once against every ``CloudDatabase`` backend.
@Suite("Database conformance", .stopsEmulators)
struct DatabaseConformanceTests {
    private let zoneA = CloudRecord.ZoneID(zoneName: "ZoneA")
    private let zoneB = CloudRecord.ZoneID(zoneName: "ZoneB")

    // MARK: Save and fetch

    @Test(arguments: DatabaseBackend.all)
    func savedRecordIsFetchedWithTheSameFields(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let fields: CloudRecord.Fields = [
            "title": .string("Moby-Dick"), "pages": .int64(635), "price": .double(9.5),
            "published": .date(.milliseconds(-3_746_304_000_000)), "cover": .bytes(Data([1, 2, 3])),
            "tags": .stringList(["sea", "whale"]), "author": reference("melville"),
        ]
        let saved = try await database.save(record("Book", "moby-dick", fields))

        let fetched = try await database.record(for: saved.id)
        #expect(fetched.recordType == "Book")
        #expect(fetched.fields == fields)
        #expect(fetched == saved)
    }

    @Test(arguments: DatabaseBackend.servers)
    func savedRecordGetsAChangeTagAndCreationAndModificationDates(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.save(record("Note", "n", ["text": .string("hi")]))

        let systemFields = try #require(saved.systemFields)
        #expect(systemFields.changeTag != nil)
        let created = try #require(systemFields.creationDate)
        let modified = try #require(systemFields.modificationDate)
        #expect(modified >= created)
        #expect(try await database.record(for: saved.id).systemFields == systemFields)
    }

    @Test(arguments: DatabaseBackend.servers)
    func systemFieldDatesAreWholeMillisecondsAsCloudKitStoresThem(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.save(record("Note", "n", ["text": .string("hi")]))
        let created = try #require(saved.systemFields?.creationDate)
        let modified = try #require(saved.systemFields?.modificationDate)

        #expect(CloudValue.normalizedDate(created) == created)
        #expect(CloudValue.normalizedDate(modified) == modified)
    }

    @Test(arguments: DatabaseBackend.all)
    func fieldDatesAreStoredToTheMillisecondAsCloudKitStoresThem(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let precise = Date(timeIntervalSince1970: 1_700_000_000.123_456)
        let location = CloudLocation(latitude: 1, longitude: 2, timestamp: precise)
        let saved = try await database.save(
            record(
                "Event", "e",
                [
                    "at": .date(precise), "times": .dateList([precise]), "where": .location(location),
                ]))

        let stored = Date.milliseconds(1_700_000_000_123)
        var storedLocation = location
        storedLocation.timestamp = stored
        let expected: CloudRecord.Fields = [
            "at": .date(stored), "times": .dateList([stored]), "where": .location(storedLocation),
        ]
        #expect(saved.fields == expected)
        #expect(try await database.record(for: saved.id).fields == expected)
    }

    /// A value CloudKit can't store, named for the test's output: describing a NaN date traps in Foundation.
    struct UnstorableValue: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let value: CloudValue

        static let all = [
            Self(testDescription: "NaN date", value: .date(Date(timeIntervalSinceReferenceDate: .nan))),
            Self(testDescription: "date past year 275,000", value: .date(Date(timeIntervalSince1970: 9e12))),
            Self(testDescription: "infinite date", value: .date(Date(timeIntervalSince1970: -.infinity))),
            Self(
                testDescription: "NaN date in a list",
                value: .dateList([.now, Date(timeIntervalSinceReferenceDate: .nan)])),
            Self(testDescription: "NaN latitude", value: .location(CloudLocation(latitude: .nan, longitude: 0))),
            Self(
                testDescription: "infinite longitude in a list",
                value: .locationList([CloudLocation(latitude: 0, longitude: .infinity)])),
            Self(
                testDescription: "infinite location timestamp",
                value: .location(
                    CloudLocation(latitude: 0, longitude: 0, timestamp: Date(timeIntervalSinceReferenceDate: .infinity))
                )),
        ]
    }

    /// Values CloudKit can't store are refused, never stored as something else (SQLite would keep a NaN date as
    /// the largest timestamp).
    @Test(arguments: DatabaseBackend.all, UnstorableValue.all)
    func valueCloudKitCantStoreIsRefusedNotChanged(backend: DatabaseBackend, unstorable: UnstorableValue) async throws {
        let value = unstorable.value
        let database = try await backend.makeDatabase()
        let client = record("Event", "e", ["value": value])

        let results = try await database.modifyRecords(saving: [client])
        guard case .invalidArguments(let reason)? = results.saveResults[client.id]?.failureKind else {
            Issue.record("expected invalid arguments, got \(String(describing: results.saveResults[client.id]))")
            return
        }
        #expect(reason.contains("field value holds a \(value.kind) value CloudKit can't store"))
        #expect(try await database.records(for: [client.id])[client.id] == .failure(.unknownItem(client.id)))
    }

    /// Names CloudKit refuses are refused here too; SQLite would cut a name at a NUL and merge two records.
    @Test(
        arguments: DatabaseBackend.all,
        [
            ("Note", "", "text", "the record name \"\" can't be used: it is empty"),
            ("Note", "n\u{0}1", "text", "the record name \"n\u{0}1\" can't be used: it has a NUL character"),
            ("Note", "café", "text", "the record name \"café\" can't be used: it has characters outside ASCII"),
            (
                "Note", "_n", "text",
                "the record name \"_n\" can't be used: it starts with an underscore, which CloudKit reserves"
            ),
            ("_Note", "n", "text", "n's record type \"_Note\" can't be used: it doesn't start with a letter"),
            (
                "Note", "n", "first name",
                "n's field name \"first name\" can't be used: it has characters other than letters, digits and underscores"
            ),
            ("Note", "n", "creationDate", "n's field name \"creationDate\" is the name of a CKRecord property"),
        ])
    func recordWithANameCloudKitRefusesIsRefused(
        backend: DatabaseBackend, names: (type: String, name: String, field: String, reason: String)
    ) async throws {
        let database = try await backend.makeDatabase()
        let client = record(names.type, names.name, CloudRecord.Fields([(names.field, .string("hi"))]))

        let results = try await database.modifyRecords(saving: [client])
        guard case .invalidArguments(let reason)? = results.saveResults[client.id]?.failureKind else {
            Issue.record("expected invalid arguments, got \(String(describing: results.saveResults[client.id]))")
            return
        }
        #expect(reason.hasPrefix(names.reason), "the reason, then perhaps how such a name comes about")
        #expect(try await database.records(for: [client.id])[client.id] == .failure(.unknownItem(client.id)))
    }

    @Test(arguments: DatabaseBackend.servers)
    func zoneWithANameCloudKitRefusesIsNotCreated(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let zones = [
            CloudRecord.ZoneID(zoneName: ""), CloudRecord.ZoneID(zoneName: "Zone\u{0}"),
            CloudRecord.ZoneID(zoneName: "Zone", ownerName: "ü"),
        ]

        let results = try await database.modifyRecordZones(saving: zones, deleting: [])
        #expect(
            results.saveResults[zones[0]]?.failureOrNil
                == .invalidArguments("the zone name \"\" can't be used: it is empty"))
        #expect(
            results.saveResults[zones[1]]?.failureOrNil
                == .invalidArguments("the zone name \"Zone\u{0}\" can't be used: it has a NUL character"))
        #expect(
            results.saveResults[zones[2]]?.failureOrNil
                == .invalidArguments("the owner name \"ü\" can't be used: it has characters outside ASCII"))
        #expect(try await database.allRecordZones() == [.default])
    }

    @Test(arguments: DatabaseBackend.all)
    func fetchingAnUnknownRecordGivesUnknownItemInThatRecordsResult(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.save(record("Note", "known", ["text": .string("hi")]))
        let unknown = CloudRecord.ID(recordName: "unknown")

        let results = try await database.records(for: [saved.id, unknown])
        #expect(results.count == 2)
        #expect(results[saved.id] == .success(saved))
        #expect(results[unknown] == .failure(.unknownItem(unknown)))
        await #expect(throws: CloudDatabaseError.unknownItem(unknown)) { _ = try await database.record(for: unknown) }
    }

    @Test(arguments: DatabaseBackend.all)
    func desiredKeysLimitTheFieldsReturned(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.save(record("Note", "n", ["a": .int64(1), "b": .int64(2), "c": .int64(3)]))

        let some = try #require(
            try await database.records(for: [saved.id], desiredKeys: ["a", "c", "missing"])[saved.id]
        ).get()
        #expect(some.fields == ["a": .int64(1), "c": .int64(3)])
        #expect(some.systemFields == saved.systemFields)

        let none = try #require(try await database.records(for: [saved.id], desiredKeys: [])[saved.id]).get()
        #expect(none.fields.isEmpty)
        #expect(none.systemFields == saved.systemFields)
    }

    @Test(arguments: DatabaseBackend.all)
    func deletingAnUnknownRecordGivesUnknownItem(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let unknown = CloudRecord.ID(recordName: "unknown")
        await #expect(throws: CloudDatabaseError.unknownItem(unknown)) {
            try await database.deleteRecord(withID: unknown)
        }
    }

    @Test(arguments: DatabaseBackend.all)
    func deletedRecordIsGone(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.save(record("Note", "n", ["text": .string("hi")]))
        try await database.deleteRecord(withID: saved.id)
        #expect(try await database.records(for: [saved.id])[saved.id] == .failure(.unknownItem(saved.id)))
    }

    // MARK: Change tags and conflicts

    @Test(arguments: DatabaseBackend.servers)
    func everySaveSetsANewChangeTag(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        var current = try await database.save(record("Counter", "c", ["count": .int64(0)]))
        var tags = [try #require(current.systemFields?.changeTag)]
        for count in 1...3 {
            current["count"] = .int64(Int64(count))
            current = try await database.save(current)
            tags.append(try #require(current.systemFields?.changeTag))
        }
        #expect(Set(tags).count == 4)
        #expect(try await database.record(for: current.id).systemFields?.changeTag == tags.last)
    }

    @Test(arguments: DatabaseBackend.servers)
    func savingTheFetchedRecordUpdatesIt(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let original = try await database.save(record("Note", "n", ["text": .string("first"), "pages": .int64(1)]))

        var fetched = try await database.record(for: original.id)
        fetched["text"] = .string("second")
        let updated = try await database.save(fetched)

        #expect(updated.fields == ["text": .string("second"), "pages": .int64(1)])
        #expect(updated.systemFields?.changeTag != original.systemFields?.changeTag)
        #expect(updated.systemFields?.creationDate == original.systemFields?.creationDate)
        let modified = try #require(updated.systemFields?.modificationDate)
        #expect(modified >= (try #require(original.systemFields?.modificationDate)))
        #expect(try await database.record(for: original.id) == updated)
    }

    @Test(arguments: DatabaseBackend.all)
    func savingARecordFetchedWithDesiredKeysKeepsTheFieldsItLacks(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let original = try await database.save(record("Note", "n", ["a": .int64(1), "b": .int64(2)]))

        var partial = try #require(try await database.records(for: [original.id], desiredKeys: ["a"])[original.id])
            .get()
        partial["a"] = .int64(10)
        let saved = try await database.save(partial)

        #expect(saved.fields == ["a": .int64(10), "b": .int64(2)])
        #expect(try await database.record(for: original.id) == saved)
    }

    @Test(arguments: DatabaseBackend.servers)
    func savingAStaleCopyConflictsWithTheServerClientAndAncestorRecords(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let ancestor = try await database.save(record("Note", "n", ["text": .string("first")]))
        var first = ancestor
        var second = ancestor
        first["text"] = .string("by first")
        let server = try await database.save(first)
        second["text"] = .string("by second")

        let results = try await database.modifyRecords(saving: [second])
        let expectedAncestor = backend.reportsAncestors ? ancestor : nil
        #expect(
            results.saveResults[second.id]
                == .failure(.serverRecordChanged(server: server, client: second, ancestor: expectedAncestor)))
        #expect(try await database.record(for: ancestor.id) == server)
    }

    @Test(arguments: DatabaseBackend.servers)
    func savingANewRecordWhoseIDExistsConflicts(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let server = try await database.save(record("Note", "n", ["text": .string("existing")]))
        let client = record("Note", "n", ["text": .string("new")])

        let results = try await database.modifyRecords(saving: [client])
        #expect(
            results.saveResults[client.id]
                == .failure(.serverRecordChanged(server: server, client: client, ancestor: nil)))
        #expect(try await database.record(for: server.id) == server)
    }

    @Test(arguments: DatabaseBackend.servers)
    func savingAnUpdateOfADeletedRecordGivesUnknownItem(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        var saved = try await database.save(record("Note", "n", ["text": .string("first")]))
        try await database.deleteRecord(withID: saved.id)
        saved["text"] = .string("second")

        let results = try await database.modifyRecords(saving: [saved])
        #expect(results.saveResults[saved.id] == .failure(.unknownItem(saved.id)))
        #expect(try await database.records(for: [saved.id])[saved.id] == .failure(.unknownItem(saved.id)))
    }

    @Test(arguments: DatabaseBackend.all)
    func aRecordCantChangeItsType(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.save(record("Note", "n", ["text": .string("hi")]))
        let client = record("Book", "n", ["title": .string("hi")])

        let results = try await database.modifyRecords(
            saving: [client], deleting: [], savePolicy: .allKeys, atomically: true)
        guard case .invalidArguments? = results.saveResults[client.id]?.failureKind else {
            Issue.record("expected invalid arguments, got \(String(describing: results.saveResults[client.id]))")
            return
        }
        #expect(try await database.record(for: saved.id) == saved)
    }

    // MARK: Save policies

    @Test(arguments: DatabaseBackend.servers)
    func changedKeysSavesAStaleCopyWithoutConflict(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        var stale = try await database.save(record("Note", "n", ["text": .string("first")]))
        var other = stale
        other["text"] = .string("by other")
        let server = try await database.save(other)
        stale["text"] = .string("by stale")

        let saved = try await database.save(stale, savePolicy: .changedKeys)
        #expect(saved.fields == ["text": .string("by stale")])
        #expect(saved.systemFields?.changeTag != server.systemFields?.changeTag)
        #expect(saved.systemFields?.changeTag != stale.systemFields?.changeTag)
        #expect(try await database.record(for: stale.id) == saved)
    }

    @Test(arguments: DatabaseBackend.all)
    func changedKeysKeepsServerFieldsTheClientLacksAndRemovesClearedFields(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        var stale = try await database.save(record("Note", "n", ["a": .int64(1), "c": .int64(3)]))
        var other = stale
        other["d"] = .int64(4)
        _ = try await database.save(other)
        stale["a"] = .int64(10)
        stale["c"] = nil
        #expect(stale.clearedFieldNames == ["c"])

        let saved = try await database.save(stale, savePolicy: .changedKeys)
        #expect(saved.fields == ["a": .int64(10), "d": .int64(4)])
        #expect(try await database.record(for: stale.id).fields == ["a": .int64(10), "d": .int64(4)])
    }

    @Test(arguments: DatabaseBackend.all)
    func allKeysWritesEveryFieldTheClientHoldsAndKeepsTheOthers(backend: DatabaseBackend) async throws {
        // CloudKit's allKeys: "a server record can contain keys that aren't present locally", and they stay (the
        // fields a newer version of an app added, which an older one's record doesn't hold).
        let database = try await backend.makeDatabase()
        let stale = try await database.save(record("Note", "n", ["a": .int64(1), "c": .int64(3)]))
        var other = stale
        other["b"] = .int64(2)
        _ = try await database.save(other)
        var client = stale
        client["a"] = .int64(10)
        client["c"] = nil

        let saved = try await database.save(client, savePolicy: .allKeys)
        #expect(saved.fields == ["a": .int64(10), "b": .int64(2)])
        #expect(try await database.record(for: client.id).fields == ["a": .int64(10), "b": .int64(2)])
    }

    @Test(arguments: DatabaseBackend.all)
    func aFieldSetToNilOnAFetchedRecordIsClearedOnSave(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let original = try await database.save(
            record("Note", "n", ["text": .string("hi"), "subtitle": .string("sub")]))

        var fetched = try await database.record(for: original.id)
        fetched["subtitle"] = nil
        #expect(fetched.clearedFieldNames == ["subtitle"])
        let saved = try await database.save(fetched)

        #expect(saved.fields == ["text": .string("hi")])
        #expect(try await database.record(for: original.id).fields == ["text": .string("hi")])
    }

    /// An older version of an app's model: it maps the note's title and body, not the color a newer version added.
    struct OlderNote: CKCodable, Identifiable {
        var id: String
        var title: String
        var body: String?
        var systemFields: CloudRecord.SystemFields?
        var cloudKitRecordType: String { "Note" }
    }

    @Test(arguments: DatabaseBackend.all)
    func anOlderModelsUpdateOfAFetchedRecordKeepsTheFieldsItDoesntMap(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let original = try await database.save(
            record(
                "Note", "n",
                ["id": .string("n"), "title": .string("t"), "body": .string("b"), "color": .string("red")]))
        var note = try CKRecordDecoder().decode(OlderNote.self, from: try await database.record(for: original.id))
        note.title = "u"
        note.body = nil
        let update = try #require(try CKRecordEncoder().encodeRecords(note).last)
        #expect(update.clearedFieldNames == ["body"])

        let saved = try await database.save(update)
        let expected: CloudRecord.Fields = ["id": .string("n"), "title": .string("u"), "color": .string("red")]
        #expect(saved.fields == expected)
        #expect(try await database.record(for: original.id).fields == expected)
    }

    // MARK: Reference actions

    @Test(arguments: DatabaseBackend.all)
    func deletingATargetDeletesItsDeleteSelfHoldersInTurn(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await database.saveRecords([
            record("Node", "root", [:]),
            record("Node", "child", ["owner": reference("root", .deleteSelf)]),
            record("Node", "grandchild", ["owner": reference("child", .deleteSelf)]),
            record("Node", "bystander", [:]),
        ])
        let root = CloudRecord.ID(recordName: "root")

        let results = try await database.modifyRecords(saving: [], deleting: [root])
        #expect(results.deleteResults.count == 1)
        #expect(results.deleteResults[root]?.succeeded == true)

        let ids = ["root", "child", "grandchild", "bystander"].map { CloudRecord.ID(recordName: $0) }
        let fetched = try await database.records(for: ids)
        for id in ids.prefix(3) { #expect(fetched[id] == .failure(.unknownItem(id))) }
        #expect(fetched[ids[3]]?.succeeded == true)
    }

    @Test(arguments: DatabaseBackend.all)
    func holdersWithActionNoneSurviveTheirTargetWithADanglingReference(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await database.saveRecords([
            record("Node", "target", [:]),
            record(
                "Node", "holder",
                [
                    "link": reference("target"),
                    "links": .referenceList([CloudReference(recordID: CloudRecord.ID(recordName: "target"))]),
                ]),
        ])

        try await database.deleteRecord(withID: CloudRecord.ID(recordName: "target"))

        let holder = try await database.record(for: CloudRecord.ID(recordName: "holder"))
        #expect(
            holder.fields == [
                "link": reference("target"),
                "links": .referenceList([CloudReference(recordID: CloudRecord.ID(recordName: "target"))]),
            ])
    }

    @Test(arguments: DatabaseBackend.all)
    func savingAValidateReferenceToAMissingRecordIsAReferenceViolation(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let holder = record("Node", "holder", ["link": reference("missing", .validate)])

        let results = try await database.modifyRecords(saving: [holder])
        guard case .referenceViolation(let id, _)? = results.saveResults[holder.id]?.failureKind else {
            Issue.record("expected a reference violation, got \(String(describing: results.saveResults[holder.id]))")
            return
        }
        #expect(id == holder.id)
        #expect(try await database.records(for: [holder.id])[holder.id] == .failure(.unknownItem(holder.id)))
    }

    @Test(arguments: DatabaseBackend.all)
    func aValidateReferenceInAListToAMissingRecordIsAReferenceViolation(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let target = try await database.save(record("Node", "target", [:]))
        let holder = record(
            "Node", "holder",
            [
                "links": .referenceList([
                    CloudReference(target, action: .validate),
                    CloudReference(recordID: CloudRecord.ID(recordName: "missing"), action: .validate),
                ])
            ])

        let results = try await database.modifyRecords(saving: [holder])
        guard case .referenceViolation(let id, _)? = results.saveResults[holder.id]?.failureKind else {
            Issue.record("expected a reference violation, got \(String(describing: results.saveResults[holder.id]))")
            return
        }
        #expect(id == holder.id)
    }

    @Test(arguments: DatabaseBackend.all)
    func aValidateTargetAndItsHolderSavedInOneRequestSucceed(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let target = record("Node", "target", [:])
        let holder = record("Node", "holder", ["link": reference("target", .validate)])

        let results = try await database.modifyRecords(saving: [target, holder])
        #expect(results.saveResults[target.id]?.succeeded == true)
        #expect(results.saveResults[holder.id]?.succeeded == true)
        #expect(try await database.record(for: holder.id).fields == holder.fields)
    }

    @Test(arguments: DatabaseBackend.all)
    func deletingARecordStillReferencedWithValidateIsAReferenceViolation(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.saveRecords([
            record("Node", "target", [:]),
            record("Node", "holder", ["link": reference("target", .validate)]),
        ])
        let target = saved[0]

        let results = try await database.modifyRecords(saving: [], deleting: [target.id])
        guard case .referenceViolation(let id, _)? = results.deleteResults[target.id]?.failureKind else {
            Issue.record("expected a reference violation, got \(String(describing: results.deleteResults[target.id]))")
            return
        }
        #expect(id == target.id)
        #expect(try await database.record(for: target.id) == target)
    }

    @Test(arguments: DatabaseBackend.all)
    func deletingAValidateTargetAndItsHolderInOneRequestSucceeds(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.saveRecords([
            record("Node", "target", [:]),
            record("Node", "holder", ["link": reference("target", .validate)]),
        ])
        let ids = saved.map(\.id)

        let results = try await database.modifyRecords(saving: [], deleting: ids)
        for id in ids { #expect(results.deleteResults[id]?.succeeded == true) }
        let fetched = try await database.records(for: ids)
        for id in ids { #expect(fetched[id] == .failure(.unknownItem(id))) }
    }

    @Test(arguments: DatabaseBackend.all)
    func atMost750RecordsMayPointToOneTargetWithDeleteSelf(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase(maximumItemsPerRequest: 400)
        _ = try await database.save(record("Node", "target", [:]))
        let holders = (0..<751).map { record("Node", "holder\($0)", ["owner": reference("target", .deleteSelf)]) }
        try await database.saveRecords(Array(holders.prefix(750)))

        let results = try await database.modifyRecords(saving: [holders[750]])
        guard case .referenceViolation(let id, _)? = results.saveResults[holders[750].id]?.failureKind else {
            Issue.record(
                "expected a reference violation, got \(String(describing: results.saveResults[holders[750].id]))")
            return
        }
        #expect(id == holders[750].id)
    }

    @Test(arguments: DatabaseBackend.all)
    func theDeleteSelfLimitRefusesTheRecordsPastItInRequestOrder(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase(maximumItemsPerRequest: 400)
        _ = try await database.save(record("Node", "target", [:]))
        let holders = (0..<740).map { record("Node", "holder\($0)", ["owner": reference("target", .deleteSelf)]) }
        try await database.saveRecords(Array(holders.prefix(370)))
        try await database.saveRecords(Array(holders.suffix(370)))

        // In this order, so that neither names nor hashes put the first ten first.
        let arriving = (0..<20).map {
            record("Node", "arriving\(String(format: "%02d", 19 - $0))", ["owner": reference("target", .deleteSelf)])
        }
        let results = try await database.modifyRecords(saving: arriving)
        for (index, holder) in arriving.enumerated() {
            let result = results.saveResults[holder.id]
            if index < 10 {
                #expect(result?.succeeded == true, "\(holder.id): \(String(describing: result))")
                continue
            }
            guard case .referenceViolation(let id, let reason)? = result?.failureKind else {
                Issue.record("\(holder.id): expected a reference violation, got \(String(describing: result))")
                continue
            }
            #expect(id == holder.id)
            #expect(reason.contains("751 records would point to target with deleteSelf; CloudKit allows 750"))
        }
    }

    @Test(arguments: DatabaseBackend.all)
    func aRecordOverOneMegabyteOfFieldDataIsRefusedAsTooLarge(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let big = record("Note", "big", ["text": .string(String(repeating: "x", count: 1_000_000))])
        let fits = record("Note", "fits", ["text": .string(String(repeating: "x", count: 999_996))])
        let results = try await database.modifyRecords(saving: [big, fits])
        #expect(results.saveResults[big.id]?.failureOrNil == .limitExceeded(limit: nil, requested: nil))
        #expect(results.saveResults[fits.id]?.succeeded == true)
        #expect(try await database.records(for: [big.id])[big.id]?.failureOrNil == .unknownItem(big.id))
    }

    @Test(arguments: DatabaseBackend.all)
    func updatingOneOf750DeleteSelfHoldersStaysWithinTheLimit(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase(maximumItemsPerRequest: 400)
        _ = try await database.save(record("Node", "target", [:]))
        let holders = (0..<750).map { record("Node", "holder\($0)", ["owner": reference("target", .deleteSelf)]) }
        var saved = try await database.saveRecords(holders)

        saved[0]["note"] = .string("updated")
        let updated = try await database.save(saved[0])
        #expect(updated.fields == ["owner": reference("target", .deleteSelf), "note": .string("updated")])
    }

    // MARK: Atomic requests

    /// In a custom zone, an atomic request fails every item when one fails (each of the others with
    /// `batchRequestFailed`) and changes nothing; a request that isn't atomic applies the items that succeed.
    @Test(arguments: DatabaseBackend.servers, [true, false])
    func aFailedItemOfACustomZoneFailsTheOthersOnlyInAnAtomicRequest(
        backend: DatabaseBackend, atomically: Bool
    ) async throws {
        let database = try await backend.makeDatabase()
        try await createZones([zoneA], in: database)
        let existing = try await database.saveRecords([
            record("Note", "taken", ["text": .string("server")], zone: zoneA),
            record("Note", "victim", [:], zone: zoneA),
        ])
        let good = record("Note", "good", ["text": .string("good")], zone: zoneA)
        let duplicate = record("Note", "taken", ["text": .string("client")], zone: zoneA)
        let victim = existing[1].id

        let results = try await database.modifyRecords(
            saving: [good, duplicate], deleting: [victim], savePolicy: .ifServerRecordUnchanged,
            atomically: atomically)
        #expect(
            results.saveResults[duplicate.id]
                == .failure(.serverRecordChanged(server: existing[0], client: duplicate, ancestor: nil)))
        let fetched = try await database.records(for: [good.id, duplicate.id, victim])
        #expect(fetched[duplicate.id] == .success(existing[0]))
        if atomically {
            #expect(results.saveResults[good.id] == .failure(.batchRequestFailed(good.id)))
            #expect(results.deleteResults[victim]?.failureOrNil == .batchRequestFailed(victim))
            #expect(fetched[good.id] == .failure(.unknownItem(good.id)))
            #expect(fetched[victim] == .success(existing[1]))
        } else {
            let saved = try #require(results.saveResults[good.id]).get()
            #expect(results.deleteResults[victim]?.succeeded == true)
            #expect(fetched[good.id] == .success(saved))
            #expect(fetched[victim] == .failure(.unknownItem(victim)))
        }
    }

    @Test(arguments: DatabaseBackend.servers)
    func atomicRequestInTheDefaultZoneAppliesEachItemOnItsOwn(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let existing = try await database.save(record("Note", "taken", ["text": .string("server")]))
        let good = record("Note", "good", ["text": .string("good")])
        let duplicate = record("Note", "taken", ["text": .string("client")])

        let results = try await database.modifyRecords(
            saving: [good, duplicate], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true
        )
        #expect(
            results.saveResults[duplicate.id]
                == .failure(.serverRecordChanged(server: existing, client: duplicate, ancestor: nil)))
        let saved = try #require(results.saveResults[good.id]).get()
        #expect(try await database.record(for: good.id) == saved)
    }

    @Test(arguments: DatabaseBackend.servers)
    func atomicFailureInOneZoneLeavesOtherZonesApplied(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await createZones([zoneA, zoneB], in: database)
        let existing = try await database.save(record("Note", "taken", [:], zone: zoneA))
        let duplicate = record("Note", "taken", ["text": .string("client")], zone: zoneA)
        let goodA = record("Note", "good", [:], zone: zoneA)
        let goodB = record("Note", "good", [:], zone: zoneB)

        let results = try await database.modifyRecords(
            saving: [duplicate, goodA, goodB], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true
        )
        #expect(
            results.saveResults[duplicate.id]
                == .failure(.serverRecordChanged(server: existing, client: duplicate, ancestor: nil)))
        #expect(results.saveResults[goodA.id] == .failure(.batchRequestFailed(goodA.id)))
        let saved = try #require(results.saveResults[goodB.id]).get()
        #expect(try await database.record(for: goodB.id) == saved)
    }

    /// A record refused before the request reaches the server (here a NaN date) is a failed item like any other:
    /// the rest of its custom zone fails with it, other zones and the default zone apply.
    @Test(arguments: DatabaseBackend.servers)
    func aRecordRefusedBeforeSendingFailsOnlyTheRestOfItsCustomZone(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await createZones([zoneA, zoneB], in: database)
        let victim = try await database.save(record("Note", "victim", [:], zone: zoneA))
        let unstorable: CloudValue = .date(Date(timeIntervalSinceReferenceDate: .nan))
        let bad = record("Note", "bad", ["when": unstorable], zone: zoneA)
        let goodA = record("Note", "good", [:], zone: zoneA)
        let goodB = record("Note", "good", [:], zone: zoneB)

        let results = try await database.modifyRecords(
            saving: [bad, goodA, goodB], deleting: [victim.id], savePolicy: .ifServerRecordUnchanged, atomically: true
        )
        guard case .invalidArguments? = results.saveResults[bad.id]?.failureKind else {
            Issue.record("expected invalid arguments, got \(String(describing: results.saveResults[bad.id]))")
            return
        }
        #expect(results.saveResults[goodA.id] == .failure(.batchRequestFailed(goodA.id)))
        #expect(results.deleteResults[victim.id]?.failureOrNil == .batchRequestFailed(victim.id))
        let saved = try #require(results.saveResults[goodB.id]).get()
        let fetched = try await database.records(for: [goodA.id, goodB.id, victim.id])
        #expect(fetched[goodA.id] == .failure(.unknownItem(goodA.id)))
        #expect(fetched[goodB.id] == .success(saved))
        #expect(fetched[victim.id] == .success(victim))
    }

    @Test(arguments: DatabaseBackend.all)
    func aRecordRefusedBeforeSendingLeavesTheDefaultZonesOtherItemsApplied(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let bad = record("Note", "bad", ["when": .date(Date(timeIntervalSinceReferenceDate: .nan))])
        let good = record("Note", "good", [:])

        let results = try await database.modifyRecords(
            saving: [bad, good], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        guard case .invalidArguments? = results.saveResults[bad.id]?.failureKind else {
            Issue.record("expected invalid arguments, got \(String(describing: results.saveResults[bad.id]))")
            return
        }
        let saved = try #require(results.saveResults[good.id]).get()
        #expect(try await database.record(for: good.id) == saved)
    }

    // MARK: Per-request limits

    @Test(arguments: DatabaseBackend.all)
    func fetchingMoreRecordsThanTheLimitIsLimitExceeded(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase(maximumItemsPerRequest: 3)
        let ids = (0..<4).map { CloudRecord.ID(recordName: "r\($0)") }
        await #expect(throws: CloudDatabaseError.limitExceeded(limit: 3, requested: 4)) {
            _ = try await database.records(for: ids)
        }
    }

    @Test(arguments: DatabaseBackend.all)
    func requestsOfExactlyTheLimitSucceed(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase(maximumItemsPerRequest: 3)
        let records = (0..<3).map { record("Note", "r\($0)", [:]) }
        let saved = try await database.modifyRecords(saving: records)
        #expect(saved.saveResults.values.allSatisfy { $0.succeeded })
        let fetched = try await database.records(for: records.map(\.id))
        #expect(fetched.values.allSatisfy { $0.succeeded })
    }

    @Test(arguments: DatabaseBackend.all)
    func modifyingMoreItemsThanTheLimitIsLimitExceededAndChangesNothing(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase(maximumItemsPerRequest: 3)
        let existing = try await database.saveRecords([record("Note", "old1", [:]), record("Note", "old2", [:])])
        let new = [record("Note", "new1", [:]), record("Note", "new2", [:])]

        await #expect(throws: CloudDatabaseError.limitExceeded(limit: 3, requested: 4)) {
            _ = try await database.modifyRecords(saving: new, deleting: existing.map(\.id))
        }
        let fetched = try await database.fetchRecords((existing + new).map(\.id))
        for record in existing { #expect(fetched[record.id] == .success(record)) }
        for record in new { #expect(fetched[record.id] == .failure(.unknownItem(record.id))) }
    }

    @Test(arguments: DatabaseBackend.all)
    func fetchRecordsSplitsABatchOverTheLimit(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase(maximumItemsPerRequest: 3)
        let saved = try await database.saveRecords((0..<5).map { record("Note", "r\($0)", ["n": .int64(Int64($0))]) })
        let missing = CloudRecord.ID(recordName: "missing")

        let results = try await database.fetchRecords(saved.map(\.id) + [missing, saved[0].id])
        #expect(results.count == 6)
        for record in saved { #expect(results[record.id] == .success(record)) }
        #expect(results[missing] == .failure(.unknownItem(missing)))
    }

    @Test(arguments: DatabaseBackend.servers)
    func saveRecordsSplitsABatchOverTheLimitAndReturnsTheRecordsInOrder(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase(maximumItemsPerRequest: 3)
        let records = (0..<7).map { record("Note", "r\($0)", ["n": .int64(Int64($0))]) }

        let saved = try await database.saveRecords(records)
        #expect(saved.map(\.id) == records.map(\.id))
        #expect(saved.map(\.fields) == records.map(\.fields))
        #expect(saved.allSatisfy { $0.systemFields?.changeTag != nil })
        let fetched = try await database.fetchRecords(records.map(\.id))
        for record in saved { #expect(fetched[record.id] == .success(record)) }
    }

    // MARK: Zones

    @Test(arguments: DatabaseBackend.servers)
    func savingIntoAZoneThatDoesntExistGivesZoneNotFound(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let note = record("Note", "n", [:], zone: zoneA)

        let results = try await database.modifyRecords(saving: [note])
        #expect(results.saveResults[note.id] == .failure(.zoneNotFound(zoneA)))
    }

    @Test(arguments: DatabaseBackend.servers)
    func createdZonesAreListedWithTheDefaultZone(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        #expect(try await database.allRecordZones() == [.default])

        let results = try await database.modifyRecordZones(saving: [zoneA, zoneB], deleting: [])
        #expect(results.saveResults.count == 2)
        #expect(results.saveResults.values.allSatisfy { $0.succeeded })
        #expect(Set(try await database.allRecordZones()) == [.default, zoneA, zoneB])
    }

    @Test(arguments: DatabaseBackend.servers)
    func recordsSavedInACreatedZoneAreFetchedFromIt(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await createZones([zoneA], in: database)

        let saved = try await database.save(record("Note", "n", ["text": .string("in A")], zone: zoneA))
        #expect(saved.id.zoneID == zoneA)
        #expect(try await database.record(for: saved.id) == saved)
        let sameNameInDefaultZone = CloudRecord.ID(recordName: "n")
        #expect(
            try await database.records(for: [sameNameInDefaultZone])[sameNameInDefaultZone]
                == .failure(.unknownItem(sameNameInDefaultZone)))
    }

    @Test(arguments: DatabaseBackend.servers)
    func deletingAZoneDeletesItsRecords(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await createZones([zoneA], in: database)
        let inZone = try await database.save(record("Note", "n", [:], zone: zoneA))
        let inDefaultZone = try await database.save(record("Note", "n", [:]))

        let results = try await database.modifyRecordZones(saving: [], deleting: [zoneA])
        #expect(results.deleteResults[zoneA]?.succeeded == true)
        #expect(try await database.allRecordZones() == [.default])
        #expect(try await database.records(for: [inZone.id])[inZone.id] == .failure(.zoneNotFound(zoneA)))

        try await createZones([zoneA], in: database)
        #expect(try await database.records(for: [inZone.id])[inZone.id] == .failure(.unknownItem(inZone.id)))
        #expect(try await database.record(for: inDefaultZone.id) == inDefaultZone)
    }

    @Test(arguments: DatabaseBackend.servers)
    func savingAnExistingZoneAgainKeepsItsRecords(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await createZones([zoneA], in: database)
        let saved = try await database.save(record("Note", "n", [:], zone: zoneA))

        try await createZones([zoneA], in: database)
        #expect(try await database.record(for: saved.id) == saved)
        #expect(Set(try await database.allRecordZones()) == [.default, zoneA])
    }

    @Test(arguments: DatabaseBackend.servers)
    func deletingARecordInAZoneThatDoesntExistGivesZoneNotFound(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let id = CloudRecord.ID(recordName: "n", zoneID: zoneA)

        let results = try await database.modifyRecords(saving: [], deleting: [id])
        #expect(results.deleteResults[id]?.failureOrNil == .zoneNotFound(zoneA))
    }

    @Test(arguments: DatabaseBackend.servers)
    func referencesAcrossZonesAreInvalidArguments(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await createZones([zoneA], in: database)
        _ = try await database.save(record("Node", "target", [:], zone: zoneA))
        let holder = record("Node", "holder", ["link": reference("target", zone: zoneA)])

        let results = try await database.modifyRecords(saving: [holder])
        guard case .invalidArguments? = results.saveResults[holder.id]?.failureKind else {
            Issue.record("expected invalid arguments, got \(String(describing: results.saveResults[holder.id]))")
            return
        }
        #expect(try await database.records(for: [holder.id])[holder.id] == .failure(.unknownItem(holder.id)))
    }

    // MARK: Queries

    private func savePeople(to database: any CloudDatabase) async throws {
        func club(_ name: String, _ action: CloudReference.Action = .none) -> CloudReference {
            CloudReference(recordID: CloudRecord.ID(recordName: name), action: action)
        }
        try await database.saveRecords([
            record(
                "Person", "p1",
                [
                    "name": .string("Cat"), "age": .int64(30), "tags": .stringList(["chess", "math"]),
                    "school": reference("s1"), "clubs": .referenceList([club("c1"), club("c2")]),
                ]),
            record(
                "Person", "p2",
                [
                    "name": .string("Bob"), "age": .int64(25), "tags": .stringList(["math"]),
                    "school": reference("s2"), "clubs": .referenceList([club("c2", .deleteSelf)]),
                ]),
            record(
                "Person", "p3",
                [
                    "name": .string("Ann"), "age": .int64(30), "tags": .stringList(["art"]),
                    "school": reference("s1", .deleteSelf), "clubs": .referenceList([club("c3")]),
                ]),
            record("Pet", "rex", ["name": .string("Ann"), "age": .int64(30), "school": reference("s1")]),
        ])
    }

    /// The record names of a query's matches, in order; every match must have succeeded.
    private func names(
        _ query: CloudQuery, in database: any CloudDatabase, zone: CloudRecord.ZoneID = .default
    ) async throws -> [String] {
        let page = try await database.records(matching: query, inZoneWith: zone)
        #expect(page.queryCursor == nil)
        return try page.matchResults.map { id, result in
            let record = try result.get()
            #expect(record.id == id)
            return id.recordName
        }
    }

    @Test(arguments: DatabaseBackend.servers)
    func queryFindsEveryRecordOfItsTypeInItsZoneOnly(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await savePeople(to: database)
        try await createZones([zoneA], in: database)
        _ = try await database.save(record("Person", "p9", ["name": .string("Ann")], zone: zoneA))

        #expect(try await names(CloudQuery(recordType: "Person"), in: database) == ["p1", "p2", "p3"])
        #expect(try await names(CloudQuery(recordType: "Pet"), in: database) == ["rex"])
        #expect(try await names(CloudQuery(recordType: "Person"), in: database, zone: zoneA) == ["p9"])
        #expect(try await names(CloudQuery(recordType: "Unknown"), in: database) == [])
    }

    @Test(arguments: DatabaseBackend.all)
    func queryReturnsTheStoredRecords(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await savePeople(to: database)
        let stored = try await database.record(for: CloudRecord.ID(recordName: "rex"))

        let page = try await database.records(matching: CloudQuery(recordType: "Pet"))
        #expect(page.matchResults.count == 1)
        #expect(page.matchResults.first?.1 == .success(stored))
    }

    @Test(arguments: DatabaseBackend.all)
    func equalsMatchesAFieldsValue(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await savePeople(to: database)

        #expect(
            try await names(
                CloudQuery(recordType: "Person", predicate: .equals(field: "name", value: .string("Ann"))), in: database
            ) == ["p3"])
        #expect(
            try await names(
                CloudQuery(recordType: "Person", predicate: .equals(field: "age", value: .int64(30))), in: database)
                == ["p1", "p3"])
        #expect(
            try await names(
                CloudQuery(recordType: "Person", predicate: .equals(field: "age", value: .int64(99))), in: database)
                == [])
        #expect(
            try await names(
                CloudQuery(recordType: "Person", predicate: .equals(field: "missing", value: .int64(30))), in: database)
                == [])
    }

    @Test(arguments: DatabaseBackend.all)
    func equalsMatchesAListFieldHoldingTheValue(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await savePeople(to: database)

        #expect(
            try await names(
                CloudQuery(recordType: "Person", predicate: .equals(field: "tags", value: .string("math"))),
                in: database) == ["p1", "p2"])
        #expect(
            try await names(
                CloudQuery(recordType: "Person", predicate: .equals(field: "tags", value: .string("art"))), in: database
            ) == ["p3"])
    }

    @Test(arguments: DatabaseBackend.all)
    func referencesMatchesAReferenceToTheRecordWhateverItsAction(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await savePeople(to: database)
        let s1 = CloudRecord.ID(recordName: "s1")

        #expect(
            try await names(CloudQuery(recordType: "Person", predicate: .references(s1, in: "school")), in: database)
                == ["p1", "p3"])
        #expect(
            try await names(CloudQuery(recordType: "Person", predicate: .references(s1, in: "clubs")), in: database)
                == [])
    }

    @Test(arguments: DatabaseBackend.all)
    func equalsMatchesAReferenceByItsTargetWhateverItsAction(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await savePeople(to: database)
        let anyAction = CloudValue.reference(
            CloudReference(recordID: CloudRecord.ID(recordName: "s1"), action: .validate))

        #expect(
            try await names(
                CloudQuery(recordType: "Person", predicate: .equals(field: "school", value: anyAction)), in: database)
                == ["p1", "p3"])
    }

    @Test(arguments: DatabaseBackend.all)
    func maximumResultsAsksForAsManyAsTheDatabaseAllows(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await savePeople(to: database)

        let page = try await database.records(
            matching: CloudQuery(recordType: "Person"), inZoneWith: .default, desiredKeys: nil,
            resultsLimit: CloudQuery.maximumResults
        )
        #expect(page.matchResults.map(\.0.recordName) == ["p1", "p2", "p3"])
        #expect(page.queryCursor == nil)
    }

    @Test(arguments: DatabaseBackend.all)
    func referencesMatchesAReferenceListHoldingTheRecord(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await savePeople(to: database)

        #expect(
            try await names(
                CloudQuery(recordType: "Person", predicate: .references(CloudRecord.ID(recordName: "c2"), in: "clubs")),
                in: database) == ["p1", "p2"])
        #expect(
            try await names(
                CloudQuery(recordType: "Person", predicate: .references(CloudRecord.ID(recordName: "c3"), in: "clubs")),
                in: database) == ["p3"])
    }

    @Test(arguments: DatabaseBackend.all)
    func andRequiresEveryPredicate(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await savePeople(to: database)

        let query = CloudQuery(
            recordType: "Person",
            predicate: .and([
                .equals(field: "age", value: .int64(30)),
                .references(CloudRecord.ID(recordName: "c2"), in: "clubs"),
            ]))
        #expect(try await names(query, in: database) == ["p1"])
    }

    @Test(arguments: DatabaseBackend.all)
    func sortDescriptorsOrderTheResultsInTurn(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        try await savePeople(to: database)

        let byAgeThenName = CloudQuery(
            recordType: "Person",
            sortDescriptors: [
                CloudQuery.SortDescriptor(field: "age", ascending: false), CloudQuery.SortDescriptor(field: "name"),
            ])
        #expect(try await names(byAgeThenName, in: database) == ["p3", "p1", "p2"])
        let byName = CloudQuery(recordType: "Person", sortDescriptors: [CloudQuery.SortDescriptor(field: "name")])
        #expect(try await names(byName, in: database) == ["p3", "p2", "p1"])
        let byNameDescending = CloudQuery(
            recordType: "Person", sortDescriptors: [CloudQuery.SortDescriptor(field: "name", ascending: false)])
        #expect(try await names(byNameDescending, in: database) == ["p1", "p2", "p3"])
    }

    @Test(arguments: DatabaseBackend.all)
    func pagingWithACursorVisitsEveryMatchOnceInOrder(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let ranks: [Int64] = [5, 2, 7, 1, 6, 3, 4]
        try await database.saveRecords(ranks.map { record("Item", "item\($0)", ["rank": .int64(10 - $0)]) })
        try await database.saveRecords([record("Other", "other", ["rank": .int64(0)])])
        let query = CloudQuery(recordType: "Item", sortDescriptors: [CloudQuery.SortDescriptor(field: "rank")])

        var pages: [[String]] = []
        var page = try await database.records(matching: query, inZoneWith: .default, desiredKeys: nil, resultsLimit: 3)
        while true {
            pages.append(try page.matchResults.map { try $0.1.get().id.recordName })
            guard let cursor = page.queryCursor else { break }
            try #require(pages.count < 10, "the cursor never ends")
            page = try await database.records(continuingMatchFrom: cursor, desiredKeys: nil, resultsLimit: 3)
        }
        #expect(pages == [["item7", "item6", "item5"], ["item4", "item3", "item2"], ["item1"]])
    }

    // MARK: Malformed requests

    @Test(arguments: DatabaseBackend.all)
    func savingAndDeletingOneRecordInOneRequestIsInvalidArguments(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.save(record("Note", "n", ["text": .string("first")]))
        var changed = saved
        changed["text"] = .string("second")

        let error = await #expect(throws: CloudDatabaseError.self) {
            _ = try await database.modifyRecords(saving: [changed], deleting: [saved.id])
        }
        guard case .invalidArguments? = (error)?.kind else {
            Issue.record("expected invalid arguments, got \(String(describing: error))")
            return
        }
        #expect(try await database.record(for: saved.id) == saved)
    }

    @Test(arguments: DatabaseBackend.all)
    func savingOneRecordTwiceInOneRequestIsInvalidArguments(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let first = record("Note", "n", ["text": .string("first")])
        let second = record("Note", "n", ["text": .string("second")])

        let error = await #expect(throws: CloudDatabaseError.self) {
            _ = try await database.modifyRecords(
                saving: [first, second], deleting: [], savePolicy: .allKeys, atomically: false)
        }
        guard case .invalidArguments? = (error)?.kind else {
            Issue.record("expected invalid arguments, got \(String(describing: error))")
            return
        }
        #expect(try await database.records(for: [first.id])[first.id] == .failure(.unknownItem(first.id)))
    }

    // MARK: Helpers

    private func createZones(_ zones: [CloudRecord.ZoneID], in database: any CloudDatabase) async throws {
        let results = try await database.modifyRecordZones(saving: zones, deleting: [])
        for zone in zones { try #require(results.saveResults[zone]).get() }
    }
}
