import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite
import NestedCloudKitServer

extension Workloads {
    // MARK: Changes since a token

    /// Reading the changes since a token must cost the changes, not the zone: one change is read in a small zone
    /// and in a large one, and the large one's time is compared with the small one's (target 1.5), for each
    /// backend that keeps a change log.
    func changes() async throws -> [BenchmarkResult] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nckc-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var results: [BenchmarkResult] = []
        for backend in ["in-memory", "sqlite"] {
            var times: [Int: Double] = [:]
            for size in [sizes.smallZone, sizes.largeZone] {
                let database: any CloudDatabase =
                    backend == "sqlite"
                    ? try SQLiteCloudDatabase(path: directory.appendingPathComponent("\(size).sqlite").path)
                    : InMemoryCloudDatabase()
                times[size] = try await timeOneChange(in: database, zoneSize: size)
            }
            results.append(
                BenchmarkResult(
                    name: "changes.\(backend)", ours: times[sizes.largeZone] ?? 0,
                    baseline: "the same in a zone of \(sizes.smallZone)", baselineSeconds: times[sizes.smallZone] ?? 0,
                    target: 1.5, details: [("records in the large zone", sizes.largeZone), ("reads timed", Self.reads)])
            )
        }
        return results
    }

    private static let reads = 200

    /// The time of `reads` reads of the one change made after a token, in a zone of `zoneSize` records.
    private func timeOneChange(in database: any CloudDatabase, zoneSize: Int) async throws -> Double {
        let zone = CloudRecord.ZoneID(zoneName: "Benchmark")
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        let records = (0..<zoneSize).map { Flat.make($0).makeRecord(zoneID: zone) }
        try await database.saveRecords(records)
        var page = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
        while page.moreComing { page = try await database.recordZoneChanges(inZoneWith: zone, since: page.changeToken) }
        let token = page.changeToken
        var changed = try await database.record(for: records[zoneSize / 2].id)
        changed["title"] = .string("changed")
        _ = try await database.save(changed)

        return try await harness.median {
            for _ in 0..<Self.reads {
                let changes = try await database.recordZoneChanges(inZoneWith: zone, since: token)
                guard changes.modifications.count == 1 else { throw BenchmarkFailure("expected one change") }
            }
        }
    }
}
