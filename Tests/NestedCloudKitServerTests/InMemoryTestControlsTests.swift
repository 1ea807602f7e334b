import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

/// The test controls only ``InMemoryCloudDatabase`` has: statistics, latency and injected faults.
@Suite("In-memory test controls")
struct InMemoryTestControlsTests {
    private let zoneA = CloudRecord.ZoneID(zoneName: "ZoneA")
    private let zoneB = CloudRecord.ZoneID(zoneName: "ZoneB")

    @Test func statisticsCountRequestsAndRecords() async throws {
        let database = InMemoryCloudDatabase()
        try await database.saveRecords([record("Note", "a", [:]), record("Note", "b", [:])])
        _ = try await database.records(for: ["a", "b", "missing"].map { CloudRecord.ID(recordName: $0) })
        _ = try await database.records(matching: CloudQuery(recordType: "Note"))
        try await database.deleteRecord(withID: CloudRecord.ID(recordName: "a"))

        let statistics = database.network.statistics
        #expect(statistics.requests == 4)
        #expect(statistics.modifyRequests == 2)
        #expect(statistics.fetchRequests == 1)
        #expect(statistics.queryRequests == 1)
        #expect(statistics.zoneRequests == 0)
        #expect(statistics.recordsFetched == 4)
        #expect(statistics.recordsSaved == 2)
        #expect(statistics.recordsDeleted == 1)
    }

    @Test func resetStatisticsStartsTheCountsAgain() async throws {
        let database = InMemoryCloudDatabase()
        try await database.saveRecords([record("Note", "a", [:])])
        database.network.resetStatistics()
        _ = try await database.records(for: [CloudRecord.ID(recordName: "a")])

        let statistics = database.network.statistics
        #expect(statistics.requests == 1)
        #expect(statistics.fetchRequests == 1)
        #expect(statistics.modifyRequests == 0)
        #expect(statistics.recordsSaved == 0)
        #expect(statistics.recordsFetched == 1)
    }

    /// A fault aimed at the next request by its number still aims at it once the numbers start again.
    @Test func aFaultForTheNextRequestOutlivesAResetOfTheCounts() async throws {
        let database = InMemoryCloudDatabase()
        try await database.saveRecords([record("Note", "a", [:]), record("Note", "b", [:])])
        database.network.failNextRequest(with: .serverResponseLost)
        database.network.resetStatistics()
        await #expect(throws: CloudDatabaseError.serverResponseLost) {
            _ = try await database.records(for: [CloudRecord.ID(recordName: "a")])
        }
        database.network.loseNextResponse()
        database.network.resetStatistics()
        await #expect(throws: CloudDatabaseError.serverResponseLost) {
            _ = try await database.save(record("Note", "c", [:]))
        }
        _ = try await database.records(for: [CloudRecord.ID(recordName: "b")])
        #expect(database.network.statistics.requests == 2)
    }

    @Test func failNextRequestFailsOnlyTheNextRequestAndWritesNothing() async throws {
        let database = InMemoryCloudDatabase()
        let note = record("Note", "n", [:])
        database.network.failNextRequest(with: .serviceUnavailable(retryAfter: 3))

        await #expect(throws: CloudDatabaseError.serviceUnavailable(retryAfter: 3)) {
            _ = try await database.save(note)
        }
        #expect(try await database.records(for: [note.id])[note.id] == .failure(.unknownItem(note.id)))
        _ = try await database.save(note)
    }

    @Test func throttleNextRequestIsRateLimitedWithItsRetryAfterInterval() async throws {
        let database = InMemoryCloudDatabase()
        database.network.throttleNextRequest(retryAfter: 2.5)

        let error = await #expect(throws: CloudDatabaseError.self) {
            _ = try await database.records(for: [CloudRecord.ID(recordName: "n")])
        }
        #expect(error == .requestRateLimited(retryAfter: 2.5))
        #expect(error?.isRetryable == true)
        #expect(error?.retryAfter == 2.5)
        _ = try await database.records(for: [CloudRecord.ID(recordName: "n")])
    }

    @Test func dropNextConnectionIsARetryableNetworkFailure() async throws {
        let database = InMemoryCloudDatabase()
        database.network.dropNextConnection()

        let error = await #expect(throws: CloudDatabaseError.self) { _ = try await database.allRecordZones() }
        guard case .networkFailure? = (error)?.kind else {
            Issue.record("expected a network failure, got \(String(describing: error))")
            return
        }
        #expect(error?.isRetryable == true)
        #expect(error?.retryAfter == nil)
        #expect(try await database.allRecordZones() == [.default])
    }

    @Test func failRequestNumberFailsThatRequestOnly() async throws {
        let database = InMemoryCloudDatabase()
        database.network.failRequest(number: 3, with: .quotaExceeded)
        let id = CloudRecord.ID(recordName: "n")

        _ = try await database.records(for: [id])
        _ = try await database.records(for: [id])
        await #expect(throws: CloudDatabaseError.quotaExceeded) { _ = try await database.records(for: [id]) }
        _ = try await database.records(for: [id])
        #expect(database.network.statistics.requests == 4)
    }

    @Test func failRecordFailsThatRecordOfANonAtomicBatchWhileTheOthersSave() async throws {
        let database = InMemoryCloudDatabase()
        let records = ["a", "b", "c"].map { record("Note", $0, [:]) }
        database.network.failRecord(records[1].id, with: .quotaExceeded)

        let results = try await database.modifyRecords(
            saving: records, deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: false)
        #expect(results.saveResults[records[1].id] == .failure(.quotaExceeded))
        let fetched = try await database.records(for: records.map(\.id))
        #expect(fetched[records[0].id] == results.saveResults[records[0].id])
        #expect(fetched[records[1].id] == .failure(.unknownItem(records[1].id)))
        #expect(fetched[records[2].id] == results.saveResults[records[2].id])
        #expect(fetched[records[0].id]?.succeeded == true)
        #expect(fetched[records[2].id]?.succeeded == true)
    }

    @Test func failRecordFailsOnlyTheNextRequestForThatRecord() async throws {
        let database = InMemoryCloudDatabase()
        let note = record("Note", "n", [:])
        database.network.failRecord(note.id, with: .quotaExceeded)

        await #expect(throws: CloudDatabaseError.quotaExceeded) { _ = try await database.save(note) }
        _ = try await database.save(note)
    }

    @Test func failRecordFailsAFetchOfThatRecord() async throws {
        let database = InMemoryCloudDatabase()
        let saved = try await database.save(record("Note", "n", [:]))
        database.network.failRecord(saved.id, with: .permissionFailure("no"))

        #expect(try await database.records(for: [saved.id])[saved.id] == .failure(.permissionFailure("no")))
        #expect(try await database.records(for: [saved.id])[saved.id] == .success(saved))
    }

    @Test func failRecordInAnAtomicRequestFailsTheRestOfItsCustomZone() async throws {
        let database = InMemoryCloudDatabase()
        _ = try await database.modifyRecordZones(saving: [zoneA], deleting: [])
        let records = ["a", "b"].map { record("Note", $0, [:], zone: zoneA) }
        database.network.failRecord(records[0].id, with: .quotaExceeded)

        let results = try await database.modifyRecords(saving: records)
        #expect(results.saveResults[records[0].id] == .failure(.quotaExceeded))
        #expect(results.saveResults[records[1].id] == .failure(.batchRequestFailed(records[1].id)))
        #expect(await database.allRecords.isEmpty)
    }

    @Test func failRecordInAnAtomicRequestStillRollsBackAnotherZoneWhereAnItemFailed() async throws {
        let database = InMemoryCloudDatabase()
        _ = try await database.modifyRecordZones(saving: [zoneA, zoneB], deleting: [])
        let existing = try await database.save(record("Note", "taken", [:], zone: zoneB))
        let injected = record("Note", "a", [:], zone: zoneA)
        let duplicate = record("Note", "taken", ["text": .string("client")], zone: zoneB)
        let good = record("Note", "good", [:], zone: zoneB)
        database.network.failRecord(injected.id, with: .quotaExceeded)

        let results = try await database.modifyRecords(saving: [injected, duplicate, good])
        #expect(results.saveResults[injected.id] == .failure(.quotaExceeded))
        #expect(
            results.saveResults[duplicate.id]
                == .failure(.serverRecordChanged(server: existing, client: duplicate, ancestor: nil)))
        #expect(results.saveResults[good.id] == .failure(.batchRequestFailed(good.id)))
        let stored = await database.allRecords.map(\.id)
        #expect(stored == [existing.id])
    }

    @Test func latencyDelaysEachRequestAtLeastThatLong() async throws {
        let database = InMemoryCloudDatabase(latency: .milliseconds(50))
        let clock = ContinuousClock()

        let elapsed = try await clock.measure { _ = try await database.records(for: [CloudRecord.ID(recordName: "n")]) }
        #expect(elapsed >= .milliseconds(50))
    }

    @Test func setLatencyChangesTheDelay() async throws {
        let database = InMemoryCloudDatabase()
        database.network.latency = .milliseconds(50)
        let clock = ContinuousClock()

        let elapsed = try await clock.measure { _ = try await database.allRecordZones() }
        #expect(elapsed >= .milliseconds(50))
    }
}
