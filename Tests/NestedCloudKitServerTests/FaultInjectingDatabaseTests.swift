import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

/// The simulated server's faults on any database: the same rules, one implementation, with the base database seeing
/// only what the faults let through.
@Suite("Faults on any database")
struct FaultInjectingDatabaseTests {
    private let zone = CloudRecord.ZoneID(zoneName: "Notes")

    /// A wrapped server with a zone, and the server, to see what reached it.
    private func makeDatabases() async throws -> (FaultInjectingDatabase, InMemoryCloudDatabase) {
        let base = InMemoryCloudDatabase()
        _ = try await base.modifyRecordZones(saving: [zone], deleting: [])
        base.network.resetStatistics()
        return (FaultInjectingDatabase(base), base)
    }

    @Test func aLostResponseIsLostAfterTheBaseAppliedTheRequest() async throws {
        let (database, base) = try await makeDatabases()
        database.network.loseNextResponse(to: .modify)
        _ = try await database.allRecordZones()
        await #expect(throws: CloudDatabaseError.serverResponseLost) {
            _ = try await database.save(record("Note", "a", ["text": .string("1")], zone: zone))
        }
        #expect(await base.allRecords.map(\.id.recordName) == ["a"])
        // Once: the next save answers.
        _ = try await database.save(record("Note", "b", ["text": .string("2")], zone: zone))
    }

    @Test func aFailedRequestNeverReachesTheBase() async throws {
        let (database, base) = try await makeDatabases()
        database.network.failNextRequest(to: .zoneChanges, with: .serviceUnavailable(retryAfter: 2))
        await #expect(throws: CloudDatabaseError.serviceUnavailable(retryAfter: 2)) {
            _ = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
        }
        #expect(base.network.statistics.changeRequests == 0)
        _ = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
        #expect(base.network.statistics.changeRequests == 1)
        #expect(database.network.statistics.changeRequests == 2)
    }

    @Test func aFailedRecordTakesItsCustomZoneWithItInAnAtomicRequest() async throws {
        let (database, base) = try await makeDatabases()
        let failed = CloudRecord.ID(recordName: "a", zoneID: zone)
        database.network.failRecord(failed, with: .permissionFailure("no"))
        let results = try await database.modifyRecords(
            saving: [
                record("Note", "a", [:], zone: zone), record("Note", "b", [:], zone: zone), record("Note", "c", [:]),
            ], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        #expect(throws: CloudDatabaseError.permissionFailure("no")) { try results.saveResults[failed]?.get() }
        let sibling = CloudRecord.ID(recordName: "b", zoneID: zone)
        #expect(throws: CloudDatabaseError.batchRequestFailed(sibling)) { try results.saveResults[sibling]?.get() }
        #expect(try results.saveResults[CloudRecord.ID(recordName: "c")]?.get().id.recordName == "c")
        // The default zone has no atomic changes: its record alone reached the server.
        #expect(await base.allRecords.map(\.id.recordName) == ["c"])
        #expect(base.network.statistics.recordsSaved == 1)
    }

    @Test func aFailedRecordFailsAloneInAFetch() async throws {
        let (database, _) = try await makeDatabases()
        try await database.saveRecords([record("Note", "a", [:]), record("Note", "b", [:])])
        let a = CloudRecord.ID(recordName: "a")
        database.network.failRecord(a, with: .networkFailure("lost"))
        let results = try await database.records(for: [a, CloudRecord.ID(recordName: "b")])
        #expect(throws: CloudDatabaseError.networkFailure("lost")) { try results[a]?.get() }
        #expect(try results[CloudRecord.ID(recordName: "b")]?.get().id.recordName == "b")
        #expect(database.network.statistics.recordsFetched == 1)
    }

    @Test func requestsWaitTheLatencyOnTheInjectedClock() async throws {
        let clock = RecordingClock()
        let database = FaultInjectingDatabase(InMemoryCloudDatabase(), latency: .milliseconds(40), clock: clock)
        _ = try await database.allRecordZones()
        _ = try await database.userRecordName()
        #expect(clock.waits == [.milliseconds(40), .milliseconds(40)])
        #expect(database.network.statistics.zoneRequests == 1)
        #expect(database.network.statistics.accountRequests == 1)
    }

    @Test func aRequestOverTheBaseLimitIsRefusedBeforeItTakesEffect() async throws {
        let database = FaultInjectingDatabase(InMemoryCloudDatabase(maximumItemsPerRequest: 2))
        // A lost response aimed at the next modify is kept for one that takes effect.
        database.network.loseNextResponse(to: .modify)
        await #expect(throws: CloudDatabaseError.limitExceeded(limit: 2, requested: 3)) {
            _ = try await database.modifyRecords(
                saving: ["a", "b", "c"].map { record("Note", $0, [:]) }, deleting: [],
                savePolicy: .ifServerRecordUnchanged, atomically: false)
        }
        await #expect(throws: CloudDatabaseError.serverResponseLost) {
            _ = try await database.save(record("Note", "a", [:]))
        }
    }
}

/// A clock whose sleeps take no time and are remembered.
private final class RecordingClock: CloudClock, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Duration] = []

    var waits: [Duration] { lock.withLock { recorded } }

    func now() -> Date { Date(timeIntervalSince1970: 1_800_000_000) }

    func sleep(for duration: Duration) async throws {
        lock.withLock { recorded.append(duration) }
    }
}
