import Crypto
import Foundation
import NestedCloudKitCodable
import NestedCloudKitEmulator
import NestedCloudKitSQLite
import NestedCloudKitWebServices

/// The emulator under load on loopback: clients at once, each saving a record (`records/modify`, signed with a
/// server-to-server key) and looking it up again (`records/lookup`), against the emulator's SQLite storage. The
/// baseline is the same calls on `SQLiteCloudDatabase` directly, with the same concurrency: the ratio is what HTTP,
/// JSON, signatures and CloudKit's checks cost. The check is the issue's floor: 500 requests a second, no errors.
extension Workloads {
    /// The floor of requests a second the emulator must serve on a 2-core machine.
    static let emulatorRequestsPerSecondFloor = 500
    /// The bound on the run's time: the load test stops there and reports what it did.
    static let emulatorTimeLimit = Duration.seconds(120)

    /// - Parameter checksFloor: Whether the floor is checked: not on the quick run, whose few requests measure
    ///   start-up more than throughput.
    func emulatorLoad(checksFloor: Bool) async throws -> BenchmarkResult {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nckc-emulator-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let key = P256.Signing.PrivateKey()
        var configuration = EmulatorConfiguration(storage: .directory(directory.appendingPathComponent("data").path))
        configuration.serverKeys["load-test"] = key.publicKey
        let emulator = try await CloudKitEmulator.start(configuration)
        let client = try CloudKitWebServicesDatabase(
            configuration: CloudKitWebServicesConfiguration(
                containerIdentifier: "iCloud.com.example.Load", environment: .development, database: .public,
                authentication: .serverToServerKey(
                    try ServerToServerKey(keyID: "load-test", pemRepresentation: key.pemRepresentation)),
                serverURL: emulator.url, retryPolicy: .never))
        let perClient = max(1, sizes.emulatorRequests / 2 / sizes.emulatorClients)
        let overHTTP: LoadRun
        do {
            // A warm-up (connections open, SQLite file created), then the measured run.
            _ = try await Self.load(client, clients: sizes.emulatorClients, roundTrips: 2, prefix: "warm")
            overHTTP = try await Self.load(
                client, clients: sizes.emulatorClients, roundTrips: perClient, prefix: "load")
        } catch {
            await emulator.stop()
            throw error
        }
        await emulator.stop()

        let direct = try SQLiteCloudDatabase(path: directory.appendingPathComponent("direct.sqlite").path)
        _ = try await Self.load(direct, clients: sizes.emulatorClients, roundTrips: 2, prefix: "warm")
        let baseline = try await Self.load(
            direct, clients: sizes.emulatorClients, roundTrips: perClient, prefix: "load")
        try direct.close()

        let perSecond = Int((Double(overHTTP.requests) / overHTTP.seconds).rounded())
        var failure: String?
        if overHTTP.errors > 0 {
            failure = "\(overHTTP.errors) requests failed: \(overHTTP.firstError ?? "")"
        } else if overHTTP.timedOut {
            failure = "the run passed its time limit of \(Self.emulatorTimeLimit)"
        } else if checksFloor, perSecond < Self.emulatorRequestsPerSecondFloor {
            failure = "\(perSecond) requests a second, below the floor of \(Self.emulatorRequestsPerSecondFloor)"
        }
        return BenchmarkResult(
            name: "emulator.load", ours: overHTTP.seconds, baseline: "SQLiteCloudDatabase direct",
            baselineSeconds: baseline.seconds, target: .infinity,
            details: [
                ("requests", overHTTP.requests), ("clients", sizes.emulatorClients), ("errors", overHTTP.errors),
                ("requests_per_second", perSecond), ("p50_us", overHTTP.percentile(0.50)),
                ("p99_us", overHTTP.percentile(0.99)), ("max_us", overHTTP.percentile(1.0)),
            ],
            failure: failure)
    }

    /// What a load run did: its requests, their latencies, its failures.
    struct LoadRun {
        var seconds: Double
        var latencies: [Duration]
        var errors: Int
        var firstError: String?
        var timedOut: Bool

        var requests: Int { latencies.count + errors }

        /// A latency percentile in microseconds (`1.0` is the slowest).
        func percentile(_ fraction: Double) -> Int {
            let sorted = latencies.sorted()
            guard !sorted.isEmpty else { return 0 }
            let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
            return Int(sorted[max(0, index)].seconds * 1_000_000)
        }
    }

    /// `clients` tasks at once, each saving a record and looking it up `roundTrips` times, within the time limit.
    static func load(
        _ database: any CloudDatabase, clients: Int, roundTrips: Int, prefix: String
    ) async throws -> LoadRun {
        let started = ContinuousClock.now
        let deadline = started + emulatorTimeLimit
        let runs = try await withThrowingTaskGroup(of: LoadRun.self) { group in
            for client in 0..<clients {
                group.addTask {
                    var run = LoadRun(seconds: 0, latencies: [], errors: 0, firstError: nil, timedOut: false)
                    run.latencies.reserveCapacity(roundTrips * 2)
                    func timed(_ body: () async throws -> Bool) async {
                        let start = ContinuousClock.now
                        do {
                            if try await body() {
                                run.latencies.append(ContinuousClock.now - start)
                                return
                            }
                            run.firstError = run.firstError ?? "a record wasn't saved, or found with what was saved"
                        } catch {
                            run.firstError = run.firstError ?? "\(error)"
                        }
                        run.errors += 1
                    }
                    for index in 0..<roundTrips {
                        if ContinuousClock.now > deadline {
                            run.timedOut = true
                            break
                        }
                        let id = CloudRecord.ID(recordName: "\(prefix)-\(client)-\(index)")
                        let record = CloudRecord(
                            recordType: "Entry", id: id,
                            fields: ["client": .int64(Int64(client)), "index": .int64(Int64(index))])
                        await timed {
                            let saved = try await database.modifyRecords(saving: [record], deleting: [])
                            return (try? saved.saveResults[id]?.get()) != nil
                        }
                        // Found with what was saved: a lookup that answered something else would time nothing.
                        await timed {
                            (try? await database.records(for: [id], desiredKeys: nil)[id]?.get())?.fields
                                == record.fields
                        }
                    }
                    return run
                }
            }
            var all: [LoadRun] = []
            for try await run in group { all.append(run) }
            return all
        }
        return LoadRun(
            seconds: (ContinuousClock.now - started).seconds, latencies: runs.flatMap(\.latencies),
            errors: runs.map(\.errors).reduce(0, +), firstError: runs.lazy.compactMap(\.firstError).first,
            timedOut: runs.contains(where: \.timedOut))
    }
}
