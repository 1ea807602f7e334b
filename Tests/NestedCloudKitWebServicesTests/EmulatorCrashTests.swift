import CloudKitTestServer
import Foundation
import NIOConcurrencyHelpers
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitWebServices

/// The emulator as a process, killed with SIGKILL while clients write through it: every write it acknowledged is
/// there when it starts again on the same data.
@Suite("Emulator: kill -9")
struct EmulatorCrashTests {
    @Test func aKillDuringModifiesLosesNothingAcknowledged() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("emulator-crash-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("key.pem")
        try TestKeys.publicKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
        let arguments = [
            "--data", directory.appendingPathComponent("data").path, "--server-key",
            "\(TestKeys.keyID)=\(keyFile.path)",
        ]

        let first = try await EmulatorProcess.start(arguments)
        let database = try Self.database(first.url)
        let acknowledged = NIOLockedValueBox<[CloudRecord.ID: Int64]>([:])
        let killAt = 200
        let killed = NIOLockedValueBox(false)
        // Four writers keep modifies in flight, one and five records a request; the kill lands while some run.
        try await withThrowingTaskGroup(of: Void.self) { writers in
            for writer in 0..<4 {
                writers.addTask {
                    for request in 0... {
                        let records = (0..<(writer.isMultiple(of: 2) ? 1 : 5)).map { index in
                            CloudRecord(
                                recordType: "Entry",
                                id: CloudRecord.ID(recordName: "w\(writer)-r\(request)-\(index)"),
                                fields: ["value": .int64(Int64(writer * 1_000_000 + request * 10 + index))])
                        }
                        guard let results = try? await database.modifyRecords(saving: records, deleting: []) else {
                            return  // the emulator is gone
                        }
                        let shouldKill = acknowledged.withLockedValue { acknowledged in
                            for case (let id, .success(let saved)) in results.saveResults {
                                if case .int64(let value)? = saved.fields["value"] { acknowledged[id] = value }
                            }
                            return acknowledged.count >= killAt
                        }
                        // The other writers' requests are in flight as this one kills the emulator.
                        if shouldKill,
                            killed.withLockedValue({ killed in
                                defer { killed = true }; return !killed
                            })
                        {
                            await first.kill()
                        }
                    }
                }
            }
            try await writers.waitForAll()
        }
        let written = acknowledged.withLockedValue { $0 }
        #expect(written.count >= killAt)

        let second = try await EmulatorProcess.start(arguments)
        defer { Task { await second.terminate() } }
        let reader = try Self.database(second.url)
        var found: [CloudRecord.ID: Int64] = [:]
        let ids = Array(written.keys)
        for start in stride(from: 0, to: ids.count, by: 200) {
            for (id, result) in try await reader.records(for: Array(ids[start..<min(start + 200, ids.count)])) {
                if case .success(let record) = result, case .int64(let value)? = record.fields["value"] {
                    found[id] = value
                }
            }
        }
        let lost = Set(written.keys).subtracting(found.keys)
        #expect(lost.isEmpty, "acknowledged records lost: \(lost.map(\.recordName).sorted())")
        #expect(found == written)
    }

    private static func database(_ url: URL) throws -> CloudKitWebServicesDatabase {
        try CloudKitWebServicesDatabase(
            configuration: CloudKitWebServicesConfiguration(
                containerIdentifier: WebServicesHarness.container, environment: .development, database: .public,
                authentication: .serverToServerKey(TestKeys.serverToServerKey()), serverURL: url, retryPolicy: .never,
                requestTimeout: .seconds(120), connectTimeout: .seconds(5)))
    }
}
