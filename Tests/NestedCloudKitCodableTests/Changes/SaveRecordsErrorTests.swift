import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

/// `saveRecords` throws one record's own error as it is, so the common conflict reads as a conflict; several
/// records failing on their own are a partial failure.
@Suite("saveRecords errors")
struct SaveRecordsErrorTests {
    let zone = CloudRecord.ZoneID(zoneName: "Notes")

    private func database(holding names: [String]) async throws -> (InMemoryCloudDatabase, [CloudRecord]) {
        let database = InMemoryCloudDatabase()
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        let saved = try await database.saveRecords(
            names.map { record("Note", $0, ["text": .string("first")], zone: zone) })
        for var other in saved {
            other["text"] = .string("by another device")
            _ = try await database.save(other)
        }
        return (database, saved)
    }

    @Test func oneConflictInAnAtomicBatchIsThrownAsTheConflict() async throws {
        let (database, stale) = try await database(holding: ["a"])
        let fresh = record("Note", "b", ["text": .string("new")], zone: zone)

        let error = try await #require(throws: CloudDatabaseError.self) {
            try await database.saveRecords([stale[0], fresh])
        }
        guard case .serverRecordChanged(let server, let client, _) = error.kind else {
            Issue.record("expected serverRecordChanged, got \(error)")
            return
        }
        #expect(server["text"] == .string("by another device"))
        #expect(client.id == stale[0].id)
        // The atomic request's other record wasn't saved.
        let fetched = try await database.records(for: [fresh.id])
        #expect(
            fetched[fresh.id].map { $0.failureKind.map { if case .unknownItem = $0 { true } else { false } } ?? false }
                == true)
    }

    @Test func twoConflictsAreAPartialFailureNamingBoth() async throws {
        let (database, stale) = try await database(holding: ["a", "b"])

        let error = try await #require(throws: CloudDatabaseError.self) { try await database.saveRecords(stale) }
        guard case .partialFailure(let failures) = error.kind else {
            Issue.record("expected partialFailure, got \(error)")
            return
        }
        #expect(failures.keys.map(\.recordName).sorted() == ["a", "b"])
        #expect(failures.values.allSatisfy { if case .serverRecordChanged = $0.kind { true } else { false } })
    }
}
