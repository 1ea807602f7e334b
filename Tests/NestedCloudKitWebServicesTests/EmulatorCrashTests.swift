import CloudKitTestServer
import Foundation
import NIOConcurrencyHelpers
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitWebServices

/// The emulator as a process, killed with SIGKILL while clients write through it: every write it acknowledged is
/// there when it starts again on the same data.
@Suite("Emulator: kill -9", .timeLimit(.minutes(2)))
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
        let written: [CloudRecord.ID: Int64]
        do {
            written = try await Self.writeUntilKilled(first)
        } catch {
            await first.kill()
            throw error
        }
        #expect(written.count >= Self.killAt)

        let second = try await EmulatorProcess.start(arguments)
        do {
            let found = try await Self.values(of: Array(written.keys), from: try Self.database(second.url))
            let lost = Set(written.keys).subtracting(found.keys)
            #expect(lost.isEmpty, "acknowledged records lost: \(lost.map(\.recordName).sorted())")
            #expect(found == written)
        } catch {
            await second.terminate()
            throw error
        }
        await second.terminate()
    }

    static let killAt = 200

    /// Four writers keep modifies in flight, one and five records a request, until one of them kills the emulator
    /// once `killAt` records were acknowledged; the others' requests are in flight then. Returns what was
    /// acknowledged.
    private static func writeUntilKilled(_ emulator: EmulatorProcess) async throws -> [CloudRecord.ID: Int64] {
        let database = try Self.database(emulator.url)
        let acknowledged = NIOLockedValueBox<[CloudRecord.ID: Int64]>([:])
        let killed = NIOLockedValueBox(false)
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
                        if shouldKill {
                            let isFirst = killed.withLockedValue { killed in
                                defer { killed = true }
                                return !killed
                            }
                            if isFirst { await emulator.kill() }
                        }
                    }
                }
            }
            try await writers.waitForAll()
        }
        return acknowledged.withLockedValue { $0 }
    }

    /// The `value` field of each record that exists, by ID.
    private static func values(of ids: [CloudRecord.ID], from database: CloudKitWebServicesDatabase) async throws
        -> [CloudRecord.ID: Int64]
    {
        var found: [CloudRecord.ID: Int64] = [:]
        for start in stride(from: 0, to: ids.count, by: 200) {
            for (id, result) in try await database.records(for: Array(ids[start..<min(start + 200, ids.count)])) {
                if case .success(let record) = result, case .int64(let value)? = record.fields["value"] {
                    found[id] = value
                }
            }
        }
        return found
    }

    private static func database(_ url: URL) throws -> CloudKitWebServicesDatabase {
        try CloudKitWebServicesDatabase(
            configuration: CloudKitWebServicesConfiguration(
                containerIdentifier: WebServicesHarness.container, environment: .development, database: .public,
                authentication: .serverToServerKey(TestKeys.serverToServerKey()), serverURL: url, retryPolicy: .never,
                requestTimeout: .seconds(120), connectTimeout: .seconds(5)))
    }
}
