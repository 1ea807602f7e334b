import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import NestedCloudKitEmulator
import NestedCloudKitWebServices
import TestSupport
import Testing

/// Change tracking, the user and subscriptions through `CloudKitWebServicesDatabase` against the emulator, with the
/// emulator's controls standing in for what only Apple's servers do (expire tokens, purge zones, sign a user out).
@Suite(.stopsEmulators) struct WebServicesEmulatorChangeTests {
    let zone = CloudRecord.ZoneID(zoneName: "Changes")

    static let container = "iCloud.com.example.Changes"
    static let user = "changes"

    /// A Web Services client signed in to a new emulator, and the emulator.
    func makeDatabases(storage: EmulatorStorage = .inMemory) async throws -> (
        client: CloudKitWebServicesDatabase, server: CloudKitEmulator
    ) {
        let emulator = try await CloudKitEmulator.start(EmulatorConfiguration(storage: storage))
        let configuration = CloudKitWebServicesConfiguration(
            containerIdentifier: Self.container, environment: .development, database: .private,
            authentication: .apiToken("api-token", webAuthToken: await emulator.signIn(user: Self.user)),
            serverURL: emulator.url, retryPolicy: .never, requestTimeout: .seconds(120)
        )
        return (try CloudKitWebServicesDatabase(configuration: configuration), emulator)
    }

    func note(_ name: String, _ text: String) -> CloudRecord {
        CloudRecord(
            recordType: "Note", id: CloudRecord.ID(recordName: name, zoneID: zone), fields: ["text": .string(text)])
    }

    @Test func savesAndDeletesComeBackInPagesWithTheirTypes() async throws {
        let (client, _) = try await makeDatabases()
        _ = try await client.modifyRecordZones(saving: [zone], deleting: [])
        try await client.saveRecords([note("a", "1"), note("b", "2"), note("c", "3")])
        try await client.deleteRecord(withID: note("b", "").id)

        var names: [String] = []
        var deletions: [CloudRecordDeletion] = []
        var token: CloudChangeToken?
        var pages = 0
        repeat {
            let page = try await client.recordZoneChanges(
                inZoneWith: zone, since: token, desiredKeys: nil, resultsLimit: 1)
            names += page.modifications.map(\.id.recordName)
            deletions += page.deletions
            token = page.changeToken
            pages += 1
            if !page.moreComing { break }
        } while pages < 10
        #expect(Set(names) == ["a", "c"])
        #expect(deletions == [CloudRecordDeletion(id: note("b", "").id, recordType: "Note")])

        let after = try await client.recordZoneChanges(inZoneWith: zone, since: token)
        #expect(after.modifications.isEmpty && after.deletions.isEmpty && !after.moreComing)
        _ = try await client.save(note("d", "4"))
        let next = try await client.recordZoneChanges(inZoneWith: zone, since: token)
        #expect(next.modifications.map(\.id.recordName) == ["d"])
    }

    @Test func emptyDesiredKeysGiveSystemFieldsOnly() async throws {
        let (client, _) = try await makeDatabases()
        _ = try await client.modifyRecordZones(saving: [zone], deleting: [])
        let saved = try await client.save(note("a", "1"))
        let changes = try await client.recordZoneChanges(
            inZoneWith: zone, since: nil, desiredKeys: [], resultsLimit: nil)
        #expect(changes.modifications.map(\.fields) == [[:]])
        #expect(changes.modifications.first?.systemFields?.changeTag == saved.systemFields?.changeTag)
    }

    @Test func expiredTokensAndMissingZonesAreTheirErrors() async throws {
        let (client, server) = try await makeDatabases()
        _ = try await client.modifyRecordZones(saving: [zone], deleting: [])
        let token = try await client.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        let databaseToken = try await client.databaseChanges(since: nil).changeToken
        await server.expireChangeTokens()
        await #expect(throws: CloudDatabaseError.changeTokenExpired(zone)) {
            try await client.recordZoneChanges(inZoneWith: zone, since: token)
        }
        await #expect(throws: CloudDatabaseError.changeTokenExpired(nil)) {
            try await client.databaseChanges(since: databaseToken)
        }
        let missing = CloudRecord.ZoneID(zoneName: "Missing")
        await #expect(throws: CloudDatabaseError.zoneNotFound(missing)) {
            try await client.recordZoneChanges(inZoneWith: missing, since: nil)
        }
    }

    /// On every storage the emulator has: it holds any server, and each deletes zones as iCloud does.
    @Test(arguments: [EmulatorStorage.inMemory, .directory(temporaryDatabasePath("emulator"))])
    func databaseChangesShowDeletedAndPurgedZones(storage: EmulatorStorage) async throws {
        let (client, server) = try await makeDatabases(storage: storage)
        let other = CloudRecord.ZoneID(zoneName: "Other")
        _ = try await client.modifyRecordZones(saving: [zone, other], deleting: [])
        let start = try await client.databaseChanges(since: nil)
        #expect(Set(start.modifiedZoneIDs).isSuperset(of: [zone, other]))

        _ = try await client.modifyRecordZones(saving: [], deleting: [zone])
        try await server.deleteZone(
            named: other.zoneName, ofUser: Self.user, container: Self.container, reason: .purged)
        let changes = try await client.databaseChanges(since: start.changeToken)
        #expect(
            changes.deletions == [
                CloudZoneDeletion(zoneID: zone, reason: .deleted), CloudZoneDeletion(zoneID: other, reason: .purged),
            ])
        #expect(changes.modifiedZoneIDs.isEmpty)
    }

    @Test func theUserAndTheAccountStatusAreTheServers() async throws {
        let (client, server) = try await makeDatabases()
        #expect(try await client.userRecordName() == CloudKitEmulator.userRecordName(for: Self.user))
        #expect(try await client.accountStatus() == .available)
        await server.signOut(user: Self.user)
        #expect(try await client.accountStatus() == .noAccount)
    }

    @Test func subscriptionsRoundTrip() async throws {
        let (client, _) = try await makeDatabases()
        _ = try await client.modifyRecordZones(saving: [zone], deleting: [])
        let zoneSubscription = CloudSubscription(id: "zone", kind: .zone(zone))
        let database = CloudSubscription(id: "database", kind: .database, sendsContentAvailable: false)
        let saved = try await client.modifySubscriptions(saving: [zoneSubscription, database], deleting: [])
        #expect(try saved.saveResults["zone"]?.get() == zoneSubscription)
        #expect(try await client.allSubscriptions() == [database, zoneSubscription])

        var changed = database
        changed.sendsContentAvailable = true
        let results = try await client.modifySubscriptions(saving: [changed], deleting: ["zone"])
        #expect(try results.saveResults["database"]?.get() == changed)
        #expect((try? results.deleteResults["zone"]?.get()) != nil)
        #expect(try await client.allSubscriptions() == [changed])
    }

    @Test func queriesByModificationDateReturnTheRecordsChangedSince() async throws {
        let (client, _) = try await makeDatabases()
        let first = try await client.save(note("a", "1").moved(to: .default))
        let since = try #require(first.systemFields?.modificationDate)
        try await Task.sleep(for: .milliseconds(5))
        _ = try await client.save(note("b", "2").moved(to: .default))
        let page = try await client.records(
            matching: CloudQuery(
                recordType: "Note", predicate: .modified(after: since),
                sortDescriptors: [CloudQuery.SortDescriptor(.modificationDate)]))
        #expect(page.matchResults.map(\.0.recordName) == ["b"])
    }
}

extension CloudRecord {
    fileprivate func moved(to zoneID: CloudRecord.ZoneID) -> CloudRecord {
        CloudRecord(
            recordType: recordType, id: CloudRecord.ID(recordName: id.recordName, zoneID: zoneID), fields: fields)
    }
}
