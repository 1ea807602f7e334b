import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite
import NestedCloudKitServer
import TestSupport
import Testing

@testable import NestedCloudKitSync

/// A trace records each call a device made and how it ended, as JSON Lines, with values redacted unless asked;
/// replayed against a fresh server, the sync example's trace ends in the state the example's server ended in.
@Suite("Sync: the trace of requests", .timeLimit(.minutes(2)))
struct SyncTraceTests {
    private static let exampleZone = CloudRecord.ZoneID(
        zoneName: "NestedCloudKitSync", ownerName: CloudRecord.ZoneID.currentUserOwnerName)

    /// Runs the sync example in a new folder with a trace; returns the folder.
    private static func runSyncExample(_ extraArguments: [String]) async throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID())")
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let tool = try #require(
            [directory, directory.deletingLastPathComponent()].map { $0.appendingPathComponent("SyncExample") }
                .first { FileManager.default.isExecutableFile(atPath: $0.path) },
            "SyncExample isn't built beside \(directory.path)")
        let result = try await ChildProcess.run(
            tool,
            arguments: ["--directory", folder.path, "--trace", folder.appendingPathComponent("trace.jsonl").path]
                + extraArguments)
        #expect(result.termination.exitStatus == 0, "\(result.output)\(result.error)")
        return folder
    }

    /// Every record of the example's zone, by ID, as type and fields.
    private static func records(in database: any CloudDatabase) async throws -> [CloudRecord.ID: CloudRecord] {
        var records: [CloudRecord.ID: CloudRecord] = [:]
        var token: CloudChangeToken?
        while true {
            let changes = try await database.recordZoneChanges(
                inZoneWith: exampleZone, since: token, desiredKeys: nil, resultsLimit: nil)
            for record in changes.modifications {
                records[record.id] = CloudRecord(recordType: record.recordType, id: record.id, fields: record.fields)
            }
            for deletion in changes.deletions { records[deletion.id] = nil }
            token = changes.changeToken
            if !changes.moreComing { return records }
        }
    }

    @Test(arguments: ScenarioServer.allCases)
    func theSyncExamplesTraceReplaysToTheStateItsServerEndedIn(_ server: ScenarioServer) async throws {
        let folder = try await Self.runSyncExample(["--trace-values"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let entries = try SyncTrace.entries(in: folder.appendingPathComponent("trace.jsonl"))
        let original = try SQLiteCloudDatabase(path: folder.appendingPathComponent("server.sqlite").path)

        let fresh = try await server.scenario().client()
        let summary = try await SyncTrace.replay(entries, into: fresh)

        #expect(summary.failures.isEmpty, "\(summary.failures)")
        let expected = try await Self.records(in: original)
        #expect(expected.keys.map(\.recordName).sorted() == ["apples", "bread", "eggs", "groceries", "milk"])
        #expect(try await Self.records(in: fresh) == expected)
        // The lines, numbered in order, each naming its device and call; the first a device's first request.
        #expect(entries.map(\.sequence) == Array(1...entries.count))
        #expect(Set(entries.map(\.client)) == ["phone", "laptop"])
        var first = SyncTrace.Entry(client: "phone", call: "accountStatus")
        first.sequence = 1
        first.time = 1_800_000_000
        first.answer = "available"
        #expect(entries.first == first)
        // The laptop fetched the phone's list before it sent its own edit.
        let laptop = entries.filter { $0.client == "laptop" && ($0.received != nil || $0.saving != nil) }
        #expect(laptop.first?.call == "recordZoneChanges")
        #expect(laptop.contains { $0.call == "modifyRecords" })
    }

    @Test func aRedactedTraceHoldsNoValueAndReplaysToTheSameRecordsFieldsAndSizes() async throws {
        let folder = try await Self.runSyncExample([])
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("trace.jsonl")
        let text = try String(contentsOf: file, encoding: .utf8)
        for value in ["Oat milk", "Weekend groceries", "Groceries for Sunday", "Apples", "Eggs", "Bread"] {
            #expect(!text.contains(value), "\(value)")
        }
        let original = try SQLiteCloudDatabase(path: folder.appendingPathComponent("server.sqlite").path)

        let fresh = InMemoryCloudDatabase()
        try await SyncTrace.replay(try SyncTrace.entries(in: file), into: fresh)

        let expected = try await Self.records(in: original)
        let replayed = try await Self.records(in: fresh)
        #expect(replayed.mapValues(\.recordType) == expected.mapValues(\.recordType))
        #expect(replayed.mapValues { $0.fields.names.sorted() } == expected.mapValues { $0.fields.names.sorted() })
        #expect(
            replayed.mapValues { CloudRequestRules.fieldDataSize(of: $0) }
                == expected.mapValues { CloudRequestRules.fieldDataSize(of: $0) })
        #expect(replayed != expected)
    }

    @Test func eachValueIsRedactedToOneOfItsTypeAndSize() {
        let target = CloudRecord.ID(recordName: "target", zoneID: Self.exampleZone)
        let values: [(CloudValue, CloudValue)] = [
            (.string("héllo"), .string("xxxxxx")),
            (.int64(42), .int64(0)),
            (.double(2.5), .double(0)),
            (.date(Date(timeIntervalSince1970: 99)), .date(Date(timeIntervalSince1970: 0))),
            (.bytes(Data([1, 2, 3])), .bytes(Data(count: 3))),
            (.reference(CloudReference(recordID: target)), .reference(CloudReference(recordID: target))),
            (.asset(CloudAsset(data: Data(count: 10))), .asset(CloudAsset(size: 10, fileChecksum: nil))),
            (
                .location(CloudLocation(latitude: 48.8, longitude: 2.3)),
                .location(CloudLocation(latitude: 0, longitude: 0))
            ),
            (.stringList(["a", "bc"]), .stringList(["x", "xx"])),
            (.int64List([1, 2]), .int64List([0, 0])),
            (.doubleList([1.5]), .doubleList([0])),
            (.dateList([Date(timeIntervalSince1970: 5)]), .dateList([Date(timeIntervalSince1970: 0)])),
            (.bytesList([Data([7])]), .bytesList([Data(count: 1)])),
            (.referenceList([CloudReference(recordID: target)]), .referenceList([CloudReference(recordID: target)])),
            (.assetList([CloudAsset(data: Data(count: 2))]), .assetList([CloudAsset(size: 2, fileChecksum: nil)])),
            (
                .locationList([CloudLocation(latitude: 1, longitude: 1)]),
                .locationList([CloudLocation(latitude: 0, longitude: 0)])
            ),
        ]
        for (value, redacted) in values {
            #expect(SyncTrace.Entry.redacted(value) == redacted, "\(value)")
        }
    }

    @Test func aFailedCallIsALineWithItsErrorsCodeAndEachRefusalIsNamed() async throws {
        let scenario = Scenario()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID()).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let trace = try SyncTrace(writingTo: file, clock: scenario.clock)
        let flaky = FlakyDatabase(scenario.server)
        let device = try await Device(
            server: trace.database(flaky, client: "device"), clock: scenario.clock,
            configuration: SyncConfiguration(retry: SyncRetryPolicy(maximumAttempts: 1, jitter: 0)))
        try await device.sync()
        try await device.store.save(Note(id: "refused", title: "secret 6b2e", body: ""))
        await flaky.fail(scenario.recordID("refused"), with: .invalidArguments("secret 6b2e"), times: 1)
        try await device.sync()
        scenario.server.network.failNextRequest(with: .requestRateLimited(retryAfter: 0))
        _ = try? await device.sync()
        await trace.close()

        let entries = try SyncTrace.entries(in: file)
        let refused = try #require(entries.first { $0.call == "modifyRecords" })
        #expect(
            refused.failures == [
                SyncTrace.Entry.Failure(recordID: scenario.recordID("refused"), error: "invalidArguments")
            ])
        #expect(refused.saving?.map(\.id) == [scenario.recordID("refused")])
        #expect(refused.received == nil)
        #expect(entries.last?.error == "requestRateLimited")
        #expect(!(try String(contentsOf: file, encoding: .utf8)).contains("6b2e"))
        // Closed: the calls after it go on, unrecorded, and closing again does nothing.
        try await device.sync()
        await trace.close()
        #expect(try SyncTrace.entries(in: file) == entries)
    }

    @Test func aReplayClearsWhatAFetchNoLongerShowsAndDeletesWhatItDeleted() async throws {
        let scenario = Scenario()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID()).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let trace = try SyncTrace(writingTo: file, values: .included, clock: scenario.clock)
        let writer = try await scenario.device()
        for name in ["kept", "deleted"] { try await writer.store.save(Note(id: name, title: name, body: name)) }
        try await writer.sync()
        var kept = try await scenario.server.record(for: scenario.recordID("kept"))
        kept["extra"] = .string("a field another client added")
        _ = try await scenario.server.save(kept)
        let reader = try await Device(server: trace.database(scenario.server, client: "reader"), clock: scenario.clock)
        try await reader.sync()
        // Another client clears the field; the writer deletes a note; the traced reader fetches both.
        kept = try await scenario.server.record(for: scenario.recordID("kept"))
        kept["extra"] = nil
        kept.clearedFieldNames = ["extra"]
        _ = try await scenario.server.save(kept)
        try await writer.store.delete(Note.self, id: "deleted")
        try await writer.sync()
        try await reader.sync()
        await trace.close()
        #expect(try await scenario.server.record(for: scenario.recordID("kept"))["extra"] == nil)

        let fresh = InMemoryCloudDatabase()
        let summary = try await SyncTrace.replay(try SyncTrace.entries(in: file), into: fresh)

        #expect(summary.failures.isEmpty)
        #expect(summary.deletedRecords == 1)
        let replayed = try await fresh.records(
            for: ["kept", "deleted"].map(scenario.recordID), desiredKeys: nil)
        let replayedKept = try #require(try replayed[scenario.recordID("kept")]?.get())
        #expect(replayedKept["extra"] == nil)
        #expect(replayedKept["title"] == .string("kept"))
        guard case .unknownItem? = replayed[scenario.recordID("deleted")]?.failureKind else {
            Issue.record("the deleted note is on the replayed server: \(String(describing: replayed))")
            return
        }
    }

    @Test func aLineThatIsntAnEntryIsNamed() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID()).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"call":"x","client":"c","format":1,"sequence":1,"time":0}"#.utf8 + [0x0A] + Data("not json".utf8))
            .write(to: file)
        #expect {
            try SyncTrace.entries(in: file)
        } throws: { error in
            "\(error)".contains("line 2 of the trace file")
        }
    }
}
