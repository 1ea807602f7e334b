import Foundation
import Logging
import NestedCloudKitCodable
import NestedCloudKitSQLite
import NestedCloudKitServer
import Testing

@testable import NestedCloudKitSync

/// The engine and the store log through swift-log: a line per request at `debug`, one `info` line per sync, the
/// documented levels for what an app may have to act on, the records and error codes in the metadata, and never a
/// field's value.
@Suite("Sync: logging")
struct SyncLoggingTests {
    private static let secretTitle = "Title only the user may read 7f3a"
    private static let secretBody = "Body only the user may read 91c2"

    /// Whether a line quotes a field's value anywhere.
    private static func quotesAValue(_ line: CapturedLog.Line) -> Bool {
        ([line.message] + line.metadata.keys + line.metadata.values).contains {
            $0.contains("7f3a") || $0.contains("91c2")
        }
    }

    @Test func aSyncWithARetryAndARefusalLogsEachAtItsLevelAndNoFieldValue() async throws {
        let log = CapturedLog()
        let scenario = try await ScenarioServer.inMemory.scenario()
        let (device, client) = try await scenario.flakyDevice(
            SyncConfiguration(retry: SyncRetryPolicy(jitter: 0), maximumRecordFailures: 1, logger: log.logger()))
        try await device.sync()
        try await device.store.save(Note(id: "throttled", title: Self.secretTitle, body: Self.secretBody))
        try await device.store.save(Note(id: "refused", title: Self.secretTitle, body: Self.secretBody))
        await client.fail(scenario.recordID("throttled"), with: .requestRateLimited(retryAfter: 0), times: 1)
        await client.fail(scenario.recordID("refused"), with: .invalidArguments(Self.secretTitle), times: 1)
        log.clear()
        try await device.sync()

        let lines = log.lines
        #expect(lines.allSatisfy { $0.label == "NestedCloudKitSync" })
        #expect(!lines.contains(where: Self.quotesAValue))
        let zone = ["zone": "NestedCloudKitSync", "owner": CloudRecord.ZoneID.currentUserOwnerName]
        // What an app may act on, in order, at its level: the batch's refusal, then the wait before its retry.
        #expect(
            lines.filter { $0.level > .info } == [
                CapturedLog.Line(
                    label: "NestedCloudKitSync", level: .error, message: "change refused and halted",
                    metadata: zone.merging(["record": "refused", "error": "invalidArguments"]) { $1 }),
                CapturedLog.Line(
                    label: "NestedCloudKitSync", level: .notice, message: "retrying",
                    metadata: ["after": "1.0 seconds", "error": "requestRateLimited"]),
            ])
        // One line per sync at `info`, with what it did.
        #expect(
            lines.filter { $0.level == .info } == [
                CapturedLog.Line(
                    label: "NestedCloudKitSync", level: .info, message: "sync finished",
                    metadata: [
                        "fetched": "0", "fetchedDeletions": "0", "sentSaves": "1", "sentDeletions": "0",
                        "changedZones": "0",
                    ])
            ])
        // Each request at `debug`, named by the database's method.
        let requests = lines.filter { $0.message == "request" }
        #expect(requests.allSatisfy { $0.level == .debug })
        #expect(requests.map { $0.metadata["request"] ?? "" }.contains("modifyRecords"))
        #expect(
            requests.contains {
                $0.metadata["request"] == "modifyRecords" && $0.metadata["saves"] == "2"
                    && $0.metadata["attempt"] == "1"
            })
    }

    @Test func aSyncThatFailsLogsAWarningWithTheErrorsCode() async throws {
        let log = CapturedLog()
        let scenario = try await ScenarioServer.inMemory.scenario()
        let (device, client) = try await scenario.flakyDevice(
            SyncConfiguration(retry: SyncRetryPolicy(maximumAttempts: 1, jitter: 0), logger: log.logger()))
        try await device.sync()
        try await device.store.save(Note(id: "n", title: Self.secretTitle, body: Self.secretBody))
        await client.fail(scenario.recordID("n"), with: .requestRateLimited(retryAfter: 0), times: 1)
        log.clear()
        await #expect(throws: SyncError.self) { try await device.sync() }
        #expect(
            log.lines.last
                == CapturedLog.Line(
                    label: "NestedCloudKitSync", level: .warning, message: "sync failed",
                    metadata: ["error": "database.requestRateLimited"]))
        #expect(!log.lines.contains(where: Self.quotesAValue))
    }

    @Test func theStoreLogsAFileItCreatesAndAFileItMigrates() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("logging-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = CapturedLog()
        let created = directory.appendingPathComponent("new.sqlite").path
        _ = try SyncStore(path: created, logger: log.logger())
        let fixture = try #require(
            Bundle.module.url(forResource: "store", withExtension: "sqlite", subdirectory: "Fixtures/store-v6"))
        let migrated = directory.appendingPathComponent("v6.sqlite").path
        try FileManager.default.copyItem(atPath: fixture.path, toPath: migrated)
        _ = try SyncStore(path: migrated, logger: log.logger())
        // Opened again, already current: nothing to say.
        _ = try SyncStore(path: migrated, logger: log.logger())
        #expect(
            log.lines == [
                CapturedLog.Line(
                    label: "NestedCloudKitSync", level: .info, message: "store created",
                    metadata: ["layout": "v8: when each change was queued"]),
                CapturedLog.Line(
                    label: "NestedCloudKitSync", level: .notice, message: "store migrated",
                    metadata: ["from": "v6: changes counted by record type", "to": "v8: when each change was queued"]),
            ])
    }

    /// Every event has its line, at the level the documentation gives it.
    @Test func eachEventHasItsDocumentedLevel() {
        let id = CloudRecord.ID(recordName: "r", zoneID: SyncStore.defaultZoneID)
        let zone = SyncStore.defaultZoneID
        let levels: [(SyncEvent, Logger.Level)] = [
            (.syncStarted, .debug),
            (.syncFinished(nil), .info),
            (.syncFinished(.closed), .warning),
            (.fetchedChanges(SyncFetchedChanges(zoneID: zone, saved: [id], deleted: [])), .debug),
            (.sentChanges(SyncSentChanges(saved: [id], deleted: [])), .debug),
            (
                .conflictResolved(ConflictResolution(recordID: id, decision: .merged(fromServer: [], fromClient: []))),
                .info
            ),
            (.conflictResolved(ConflictResolution(recordID: id, decision: .keptServer)), .notice),
            (.uploadFailed(id, .quotaExceeded, halted: false), .warning),
            (.uploadFailed(id, .quotaExceeded, halted: true), .error),
            (.changeReverted(id, because: .permissionFailure("read-only"), discarded: nil), .error),
            (.changeDiscarded(id, discarded: CloudRecord(recordType: "Note", id: id)), .warning),
            (.recordSkipped(id, reason: Self.secretTitle), .warning),
            (.accountChanged(previous: "a", current: "b", action: .adopted), .notice),
            (.accountChanged(previous: "a", current: "b", action: .resetLocalStore), .warning),
            (.zoneDeleted(zone, reason: .purged, action: .deletedLocalData), .warning),
            (.sharedZoneRemoved(zone, discardedChanges: 0), .notice),
            (.sharedZoneRemoved(zone, discardedChanges: 2), .error),
            (.changeTokenExpired(nil), .notice),
            (.retrying(after: .seconds(2), because: .serverResponseLost), .notice),
            (.halted(.quotaExceeded), .warning),
        ]
        for (event, level) in levels {
            let entry = SyncLog.entry(for: event, summary: nil)
            #expect(entry.level == level, "\(event)")
            #expect(!"\(entry.message) \(entry.metadata)".contains("7f3a"), "\(event)")
        }
        #expect(
            SyncLog.entry(for: .accountChanged(previous: "a", current: "b", action: .adopted), summary: nil).metadata
                == ["action": "adopted"])
    }
}
