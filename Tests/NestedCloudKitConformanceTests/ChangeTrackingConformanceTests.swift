import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// Change tracking, checked once against every backend: what a sync client relies on.
@Suite("Database conformance: changes since a token", .stopsEmulators)
struct ChangeTrackingConformanceTests {
    private let zone = CloudRecord.ZoneID(zoneName: "Synced")

    private func makeDatabase(
        _ backend: DatabaseBackend, maximumItemsPerRequest: Int = 400, clock: SteppingClock = SteppingClock()
    ) async throws -> any CloudDatabase {
        let database = try await backend.makeDatabase(maximumItemsPerRequest: maximumItemsPerRequest, clock: clock)
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        return database
    }

    private func note(_ name: String, _ text: String) -> CloudRecord {
        record("Note", name, ["text": .string(text)], zone: zone)
    }

    /// Every page from `token` on, until `moreComing` is false.
    private func allChanges(
        in database: any CloudDatabase, zone: CloudRecord.ZoneID, since token: CloudChangeToken?,
        desiredKeys: [String]? = nil, resultsLimit: Int? = nil
    ) async throws -> (pages: [CloudRecordZoneChanges], token: CloudChangeToken) {
        var pages: [CloudRecordZoneChanges] = []
        var token = token
        repeat {
            let page = try await database.recordZoneChanges(
                inZoneWith: zone, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
            pages.append(page)
            token = page.changeToken
            if pages.count > 1_000 { Issue.record("moreComing never became false") }
        } while pages.last?.moreComing == true && pages.count <= 1_000
        return (pages, try #require(token))
    }

    @Test(arguments: DatabaseBackend.servers)
    func savesUpdatesAndDeletesAppearOnceInTheOrderOfTheirLatestChange(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let start = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
        #expect(start.modifications.isEmpty && start.deletions.isEmpty && !start.moreComing)

        let a = try await database.save(note("a", "first"))
        _ = try await database.save(note("b", "second"))
        var changedA = a
        changedA["text"] = .string("first, edited")
        _ = try await database.save(changedA)
        try await database.deleteRecord(withID: CloudRecord.ID(recordName: "b", zoneID: zone))
        _ = try await database.save(note("c", "third"))

        let changes = try await allChanges(in: database, zone: zone, since: start.changeToken).pages
        #expect(changes.flatMap(\.modifications).map(\.id.recordName) == ["a", "c"])
        #expect(changes.flatMap(\.modifications).map { $0["text"] } == [.string("first, edited"), .string("third")])
        #expect(
            changes.flatMap(\.deletions)
                == [CloudRecordDeletion(id: CloudRecord.ID(recordName: "b", zoneID: zone), recordType: "Note")])
        #expect(changes.flatMap(\.modificationFailures).isEmpty)
    }

    @Test(arguments: DatabaseBackend.servers)
    func aNilTokenGivesEveryRecordOfTheZoneAndNoneOfAnother(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let other = CloudRecord.ZoneID(zoneName: "Other")
        _ = try await database.modifyRecordZones(saving: [other], deleting: [])
        _ = try await database.saveRecords([note("a", "1"), note("b", "2")])
        _ = try await database.save(record("Note", "elsewhere", ["text": .string("x")], zone: other))

        let changes = try await allChanges(in: database, zone: zone, since: nil).pages
        #expect(Set(changes.flatMap(\.modifications).map(\.id.recordName)) == ["a", "b"])
        let saved = try await database.record(for: CloudRecord.ID(recordName: "a", zoneID: zone))
        #expect(changes.flatMap(\.modifications).first { $0.id.recordName == "a" } == saved)
    }

    @Test(arguments: DatabaseBackend.servers)
    func pagesAndMoreComingAddUpToTheWhole(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let start = try await database.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        let names = (0..<23).map { String(format: "n%02d", $0) }
        for batch in stride(from: 0, to: names.count, by: 5) {
            _ = try await database.saveRecords(names[batch..<min(batch + 5, names.count)].map { note($0, $0) })
        }

        let pages = try await allChanges(in: database, zone: zone, since: start, resultsLimit: 7).pages
        #expect(pages.map { $0.modifications.count } == [7, 7, 7, 2])
        #expect(pages.map(\.moreComing) == [true, true, true, false])
        #expect(pages.flatMap(\.modifications).map(\.id.recordName) == names)
    }

    @Test(arguments: DatabaseBackend.servers)
    func aTokenTakenBeforeAChangeSeesItAndOneTakenAfterDoesnt(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        _ = try await database.save(note("old", "before"))
        let before = try await allChanges(in: database, zone: zone, since: nil).token

        _ = try await database.save(note("new", "after"))
        let seen = try await allChanges(in: database, zone: zone, since: before)
        #expect(seen.pages.flatMap(\.modifications).map(\.id.recordName) == ["new"])

        let after = try await database.recordZoneChanges(inZoneWith: zone, since: seen.token)
        #expect(after.modifications.isEmpty && after.deletions.isEmpty && !after.moreComing)
        // Asking again with the same token gives the same answer: a token is a position, not a cursor that moves.
        let again = try await allChanges(in: database, zone: zone, since: before)
        #expect(again.pages.flatMap(\.modifications).map(\.id.recordName) == ["new"])
    }

    @Test(arguments: DatabaseBackend.servers)
    func emptyDesiredKeysGiveSystemFieldsOnly(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let saved = try await database.save(note("a", "text"))

        let changes = try await database.recordZoneChanges(
            inZoneWith: zone, since: nil, desiredKeys: [], resultsLimit: nil)
        let returned = try #require(changes.modifications.first)
        #expect(returned.fields.isEmpty)
        #expect(returned.recordType == "Note")
        #expect(returned.systemFields?.changeTag == saved.systemFields?.changeTag)
        #expect(returned.systemFields?.modificationDate == saved.systemFields?.modificationDate)
    }

    @Test(arguments: DatabaseBackend.servers)
    func theDefaultZoneRefusesZoneChanges(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        await #expect(throws: CloudDatabaseError.defaultZoneHasNoChanges) {
            _ = try await database.recordZoneChanges(inZoneWith: .default, since: nil)
        }
    }

    @Test(arguments: DatabaseBackend.servers)
    func aMissingZoneIsZoneNotFound(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let missing = CloudRecord.ZoneID(zoneName: "Missing")
        await #expect(throws: CloudDatabaseError.zoneNotFound(missing)) {
            _ = try await database.recordZoneChanges(inZoneWith: missing, since: nil)
        }
    }

    @Test(arguments: DatabaseBackend.servers)
    func anExpiredTokenIsTheExpiredTokenErrorAndANilTokenStartsOver(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        _ = try await database.saveRecords([note("kept", "1"), note("gone", "2")])
        let token = try await allChanges(in: database, zone: zone, since: nil).token
        try await database.deleteRecord(withID: CloudRecord.ID(recordName: "gone", zoneID: zone))
        try await backend.expireChangeTokens(database)

        await #expect(throws: CloudDatabaseError.changeTokenExpired(zone)) {
            _ = try await database.recordZoneChanges(inZoneWith: zone, since: token)
        }
        let fresh = try await allChanges(in: database, zone: zone, since: nil).pages
        #expect(fresh.flatMap(\.modifications).map(\.id.recordName) == ["kept"])
    }

    @Test(arguments: DatabaseBackend.servers)
    func aZoneCreatedAgainExpiresTheTokensOfItsEarlierLife(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        _ = try await database.save(note("a", "1"))
        let token = try await allChanges(in: database, zone: zone, since: nil).token
        _ = try await database.modifyRecordZones(saving: [], deleting: [zone])
        await #expect(throws: CloudDatabaseError.zoneNotFound(zone)) {
            _ = try await database.recordZoneChanges(inZoneWith: zone, since: token)
        }
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        await #expect(throws: CloudDatabaseError.changeTokenExpired(zone)) {
            _ = try await database.recordZoneChanges(inZoneWith: zone, since: token)
        }
    }

    @Test(arguments: DatabaseBackend.servers)
    func aTokenOfAnotherZoneIsRefused(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let other = CloudRecord.ZoneID(zoneName: "Other")
        _ = try await database.modifyRecordZones(saving: [other], deleting: [])
        let otherToken = try await database.recordZoneChanges(inZoneWith: other, since: nil).changeToken

        await #expect {
            _ = try await database.recordZoneChanges(inZoneWith: zone, since: otherToken)
        } throws: { error in
            // Refused either way: a token is only meaningful to the zone that made it.
            switch (error as? CloudDatabaseError)?.kind {
            case .invalidArguments?, .changeTokenExpired?: true
            default: false
            }
        }
    }

    // MARK: Database changes

    @Test(arguments: DatabaseBackend.servers)
    func zonesCreatedChangedAndDeletedShowInDatabaseChangesWithTheReason(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        var start = try await database.databaseChanges(since: nil)
        while start.moreComing { start = try await database.databaseChanges(since: start.changeToken) }

        let created = CloudRecord.ZoneID(zoneName: "Created")
        let doomed = CloudRecord.ZoneID(zoneName: "Doomed")
        _ = try await database.modifyRecordZones(saving: [created, doomed], deleting: [])
        _ = try await database.save(note("a", "changes the synced zone"))
        _ = try await database.modifyRecordZones(saving: [], deleting: [doomed])
        _ = try await database.save(record("Note", "default", ["text": .string("x")]))

        let changes = try await database.databaseChanges(since: start.changeToken)
        #expect(Set(changes.modifiedZoneIDs) == [created, zone])
        #expect(changes.deletions == [CloudZoneDeletion(zoneID: doomed, reason: .deleted)])
        #expect(!changes.modifiedZoneIDs.contains(.default))

        let after = try await database.databaseChanges(since: changes.changeToken)
        #expect(after.modifiedZoneIDs.isEmpty && after.deletions.isEmpty && !after.moreComing)
    }

    @Test(arguments: DatabaseBackend.servers)
    func aZoneDeletedAndCreatedAgainStaysDeletedThenChangedForAClientThatMissedBoth(
        backend: DatabaseBackend
    ) async throws {
        let database = try await makeDatabase(backend)
        var start = try await database.databaseChanges(since: nil)
        while start.moreComing { start = try await database.databaseChanges(since: start.changeToken) }

        _ = try await database.modifyRecordZones(saving: [], deleting: [zone])
        let afterDeletion = try await database.databaseChanges(since: start.changeToken)
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        _ = try await database.save(note("a", "in the zone's new life"))

        // A client that missed both learns of both: the deletion, then the zone as it is now.
        let missedBoth = try await database.databaseChanges(since: start.changeToken)
        #expect(missedBoth.deletions == [CloudZoneDeletion(zoneID: zone, reason: .deleted)])
        #expect(missedBoth.modifiedZoneIDs == [zone])
        // One that saw the deletion sees only the new life.
        let sawDeletion = try await database.databaseChanges(since: afterDeletion.changeToken)
        #expect(sawDeletion.deletions.isEmpty)
        #expect(sawDeletion.modifiedZoneIDs == [zone])
    }

    @Test(arguments: DatabaseBackend.servers)
    func databaseChangesPageThroughEveryZone(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let zones = (0..<5).map { CloudRecord.ZoneID(zoneName: "Z\($0)") }
        _ = try await database.modifyRecordZones(saving: zones, deleting: [])

        var pages: [CloudDatabaseChanges] = []
        var token: CloudChangeToken?
        repeat {
            let page = try await database.databaseChanges(since: token, resultsLimit: 2)
            pages.append(page)
            token = page.changeToken
        } while pages.last?.moreComing == true && pages.count < 100
        #expect(Set(pages.flatMap(\.modifiedZoneIDs)) == Set(zones))
        #expect(pages.flatMap(\.modifiedZoneIDs).count == zones.count)
        #expect(pages.dropLast().allSatisfy { $0.modifiedZoneIDs.count == 2 && $0.moreComing })
    }

    // MARK: Queries on system fields

    @Test(arguments: DatabaseBackend.servers)
    func queriesByModificationDateReturnExactlyTheRecordsChangedSince(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase(clock: SteppingClock())
        let early = try await database.saveRecords(
            [record("Note", "a", ["text": .string("1")]), record("Note", "b", ["text": .string("2")])])
        let since = try #require(early.compactMap(\.systemFields?.modificationDate).max())
        _ = try await database.saveRecords([record("Note", "c", ["text": .string("3")])])
        var changedB = try #require(early.last)
        changedB["text"] = .string("2, edited")
        _ = try await database.save(changedB)

        let query = CloudQuery(
            recordType: "Note", predicate: .modified(after: since),
            sortDescriptors: [CloudQuery.SortDescriptor(.modificationDate)])
        let page = try await database.records(matching: query, inZoneWith: .default)
        #expect(page.matchResults.map(\.0.recordName) == ["c", "b"])
        #expect(page.queryCursor == nil)
    }

    @Test(arguments: DatabaseBackend.all)
    func queriesCompareFieldsAndSortBySystemFieldsDescending(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase(clock: SteppingClock())
        for (name, pages) in [("short", 90), ("medium", 300), ("long", 800)] {
            _ = try await database.save(record("Book", name, ["pages": .int64(Int64(pages))]))
        }
        let query = CloudQuery(
            recordType: "Book", predicate: .compare(field: "pages", .greaterThanOrEquals, .int64(300)),
            sortDescriptors: [CloudQuery.SortDescriptor(.creationDate, ascending: false)])
        let page = try await database.records(matching: query, inZoneWith: .default)
        #expect(page.matchResults.map(\.0.recordName) == ["long", "medium"])
    }

    // MARK: The user and subscriptions

    @Test(arguments: DatabaseBackend.servers)
    func theUserIsSignedInWithAStableRecordName(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        #expect(try await database.accountStatus() == .available)
        let name = try await database.userRecordName()
        #expect(!name.isEmpty)
        #expect(try await database.userRecordName() == name)
    }

    @Test(arguments: DatabaseBackend.servers)
    func subscriptionsAreSavedListedAndDeleted(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let whole = CloudSubscription(id: "database", kind: .database)
        let synced = CloudSubscription(id: "synced-zone", kind: .zone(zone), sendsContentAvailable: true)
        let missing = CloudSubscription(id: "missing", kind: .zone(CloudRecord.ZoneID(zoneName: "Missing")))

        let saved = try await database.modifySubscriptions(saving: [whole, synced, missing], deleting: [])
        #expect(try saved.saveResults["database"]?.get() == whole)
        #expect(try saved.saveResults["synced-zone"]?.get() == synced)
        #expect(throws: CloudDatabaseError.zoneNotFound(CloudRecord.ZoneID(zoneName: "Missing"))) {
            try saved.saveResults["missing"]?.get()
        }
        #expect(try await database.allSubscriptions() == [whole, synced])

        let deleted = try await database.modifySubscriptions(saving: [], deleting: ["database"])
        _ = try #require(deleted.deleteResults["database"]).get()
        #expect(try await database.allSubscriptions() == [synced])
    }

    @Test(arguments: DatabaseBackend.servers)
    func aZonePurgedByTheUserIsUserDeletedUntilCreatedAgain(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let token = try await database.databaseChanges(since: nil).changeToken
        _ = try await database.save(record("Note", "a", ["text": .string("1")], zone: zone))
        try await backend.deleteZoneAsICloud(database, zone, .purged)

        let changes = try await database.databaseChanges(since: token)
        #expect(changes.deletions == [CloudZoneDeletion(zoneID: zone, reason: .purged)])
        let refusal: CloudDatabaseError = backend.reportsUserDeletedZones ? .userDeletedZone(zone) : .zoneNotFound(zone)
        let results = try await database.modifyRecords(
            saving: [record("Note", "b", ["text": .string("2")], zone: zone)], deleting: [],
            savePolicy: .ifServerRecordUnchanged, atomically: false)
        #expect(throws: refusal) {
            try results.saveResults[CloudRecord.ID(recordName: "b", zoneID: zone)]?.get()
        }
        await #expect(throws: refusal) {
            _ = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
        }

        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        let fresh = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
        #expect(fresh.modifications.isEmpty)
    }

    @Test(arguments: DatabaseBackend.servers)
    func aPurgeStaysVisibleAfterTheZoneIsCreatedAgainAndDeletedAgain(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let token = try await database.databaseChanges(since: nil).changeToken
        try await backend.deleteZoneAsICloud(database, zone, .purged)
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        #expect(
            try await database.databaseChanges(since: token).deletions == [
                CloudZoneDeletion(zoneID: zone, reason: .purged)
            ])
        _ = try await database.modifyRecordZones(saving: [], deleting: [zone])
        // A device that missed all of it must still hear of the purge, before the later deletion.
        let changes = try await database.databaseChanges(since: token)
        #expect(
            changes.deletions == [
                CloudZoneDeletion(zoneID: zone, reason: .purged), CloudZoneDeletion(zoneID: zone, reason: .deleted),
            ])
        #expect(changes.modifiedZoneIDs.isEmpty)
    }
}
