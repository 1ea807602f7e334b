import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

/// The controls that make `InMemoryCloudDatabase` a simulated CloudKit server for a sync engine's tests.
@Suite("In-memory database: server controls")
struct InMemoryServerControlsTests {
    private let zone = CloudRecord.ZoneID(zoneName: "Synced")

    private func makeDatabase() async throws -> InMemoryCloudDatabase {
        let database = InMemoryCloudDatabase(userRecordName: "_alice", clock: SteppingClock())
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        return database
    }

    @Test func eachUserHasAPrivateDatabaseOfTheirOwn() async throws {
        let database = try await makeDatabase()
        _ = try await database.save(record("Note", "alices", ["text": .string("mine")], zone: zone))
        #expect(try await database.userRecordName() == "_alice")

        await database.signIn(as: "_bob")
        #expect(try await database.userRecordName() == "_bob")
        #expect(try await database.allRecordZones() == [.default])
        await #expect(throws: CloudDatabaseError.zoneNotFound(zone)) {
            _ = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
        }

        await database.signIn(as: "_alice")
        let changes = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
        #expect(changes.modifications.map(\.id.recordName) == ["alices"])
    }

    @Test func aTokenOfOneUserIsNeverValidForAnother() async throws {
        let database = try await makeDatabase()
        let alicesToken = try await database.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        await database.signIn(as: "_bob")
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        await #expect(throws: CloudDatabaseError.changeTokenExpired(zone)) {
            _ = try await database.recordZoneChanges(inZoneWith: zone, since: alicesToken)
        }
    }

    @Test func signedOutThereIsNoAccountAndEveryRequestNeedsOne() async throws {
        let database = try await makeDatabase()
        await database.signOut()
        #expect(try await database.accountStatus() == .noAccount)
        await #expect(throws: CloudDatabaseError.notAuthenticated) { _ = try await database.userRecordName() }
        await #expect(throws: CloudDatabaseError.notAuthenticated) {
            _ = try await database.records(for: [CloudRecord.ID(recordName: "x")])
        }
        #expect(await database.allRecords.isEmpty)
    }

    /// As on CloudKit, a request of a signed-out device still reaches the server: it is counted, a fault aimed at it
    /// applies first, and only then does the account fail it; over the limit, the limit fails it first.
    @Test func aSignedOutRequestIsCountedAndMeetsItsFaultBeforeTheAccountFailsIt() async throws {
        let database = try await makeDatabase()
        database.network.resetStatistics()
        await database.signOut()
        await #expect(throws: CloudDatabaseError.notAuthenticated) { _ = try await database.allRecordZones() }
        database.network.failNextRequest(with: .networkFailure("dropped"))
        await #expect(throws: CloudDatabaseError.networkFailure("dropped")) {
            _ = try await database.records(for: [CloudRecord.ID(recordName: "x")])
        }
        await #expect(throws: CloudDatabaseError.limitExceeded(limit: 400, requested: 401)) {
            _ = try await database.records(for: (0...400).map { CloudRecord.ID(recordName: "r\($0)") })
        }
        await #expect(throws: CloudDatabaseError.notAuthenticated) {
            _ = try await database.acceptShare(shortGUID: "nothing")
        }
        let statistics = database.network.statistics
        #expect(statistics.requests == 4)
        #expect(statistics.fetchRequests == 2)
    }

    /// Only writes take time from the clock: a test's stepping clock stamps consecutive saves a step apart, however
    /// many reads (fetches, queries, the server's own reads of subscriptions and shares) come between them.
    @Test func readsTakeNoTimeFromTheClock() async throws {
        let database = try await makeDatabase()
        let first = try await database.save(record("Note", "first", ["text": .string("a")], zone: zone))
        for _ in 0..<3 {
            _ = try await database.records(for: [first.id])
            _ = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
        }
        let second = try await database.save(record("Note", "second", ["text": .string("b")], zone: zone))
        let firstDate = try #require(first.systemFields?.modificationDate)
        let secondDate = try #require(second.systemFields?.modificationDate)
        #expect(secondDate.timeIntervalSince(firstDate) == 1)
    }

    @Test func anAccountNotReadyFailsRequestsWithAnErrorToRetry() async throws {
        let database = try await makeDatabase()
        await database.setAccountStatus(.temporarilyUnavailable)
        #expect(try await database.accountStatus() == .temporarilyUnavailable)
        await #expect(throws: CloudDatabaseError.accountTemporarilyUnavailable) {
            _ = try await database.allRecordZones()
        }
        #expect(CloudDatabaseError.accountTemporarilyUnavailable.isRetryable)
        await database.setAccountStatus(nil)
        #expect(try await database.allRecordZones().contains(zone))
    }

    @Test func faultsAndLostAnswersAimedAtAKindOfRequestWaitForIt() async throws {
        let database = try await makeDatabase()
        database.network.loseNextResponse(to: .modify)
        database.network.failNextRequest(to: .zoneChanges, with: .serviceUnavailable(retryAfter: 3))
        // Requests of other kinds go through.
        _ = try await database.databaseChanges(since: nil)
        _ = try await database.records(for: [CloudRecord.ID(recordName: "x", zoneID: zone)])
        await #expect(throws: CloudDatabaseError.serverResponseLost) {
            _ = try await database.save(record("Note", "a", ["text": .string("1")], zone: zone))
        }
        #expect(await database.allRecords.map(\.id.recordName) == ["a"])
        await #expect(throws: CloudDatabaseError.serviceUnavailable(retryAfter: 3)) {
            _ = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
        }
        // Each once.
        _ = try await database.save(record("Note", "b", ["text": .string("2")], zone: zone))
        _ = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
    }

    @Test func anEncryptedDataResetShowsWithItsReason() async throws {
        let database = try await makeDatabase()
        let token = try await database.databaseChanges(since: nil).changeToken
        await database.deleteZone(zone, reason: .encryptedDataReset)
        let changes = try await database.databaseChanges(since: token)
        #expect(changes.deletions == [CloudZoneDeletion(zoneID: zone, reason: .encryptedDataReset)])
    }

    @Test func aLostResponseHappensAfterTheRequestTookEffect() async throws {
        let database = try await makeDatabase()
        database.network.loseNextResponse()
        await #expect(throws: CloudDatabaseError.serverResponseLost) {
            _ = try await database.save(record("Note", "a", ["text": .string("1")], zone: zone))
        }
        let stored = try await database.record(for: CloudRecord.ID(recordName: "a", zoneID: zone))
        #expect(stored["text"] == .string("1"))
        // Saving the same new record again, as a client that can't know would, is a conflict carrying the server's
        // record: the client learns it was saved.
        await #expect {
            _ = try await database.save(record("Note", "a", ["text": .string("1")], zone: zone))
        } throws: { error in
            guard case .serverRecordChanged(let server, _, _) = (error as? CloudDatabaseError)?.kind else {
                return false
            }
            return server == stored
        }
    }

    @Test func subscriptionsCollectThePushesTheyWouldSend() async throws {
        let database = try await makeDatabase()
        _ = try await database.modifySubscriptions(
            saving: [
                CloudSubscription(id: "all", kind: .database), CloudSubscription(id: "synced", kind: .zone(zone)),
            ], deleting: [])
        _ = try await database.saveRecords([
            record("Note", "a", ["text": .string("1")], zone: zone),
            record("Note", "b", ["text": .string("2")], zone: zone),
        ])
        _ = try await database.save(record("Note", "default", ["text": .string("3")]))

        #expect(
            await database.takeNotifications() == [
                CloudNotification(
                    kind: .database, subscriptionID: "all", databaseScope: .private, userRecordName: "_alice"),
                CloudNotification(
                    kind: .recordZone(zone), subscriptionID: "synced", databaseScope: .private,
                    userRecordName: "_alice"),
            ])
        #expect(await database.takeNotifications().isEmpty)
    }

    @Test func readingOneChangeDoesntReadTheZone() async throws {
        // The log skips what a token has seen: one change after many is one change, in order, at once.
        let database = try await makeDatabase()
        for batch in 0..<10 {
            _ = try await database.saveRecords(
                (0..<100).map { record("Note", "n\(batch)-\($0)", ["text": .string("x")], zone: zone) })
        }
        var token = try await database.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        var page = try await database.recordZoneChanges(inZoneWith: zone, since: token)
        while page.moreComing {
            token = page.changeToken
            page = try await database.recordZoneChanges(inZoneWith: zone, since: token)
        }
        _ = try await database.save(record("Note", "latest", ["text": .string("y")], zone: zone))
        database.network.resetStatistics()
        let latest = try await database.recordZoneChanges(inZoneWith: zone, since: page.changeToken)
        #expect(latest.modifications.map(\.id.recordName) == ["latest"])
        #expect(database.network.statistics.recordsFetched == 1)
    }
}
