import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite
import TestSupport
import Testing

@testable import NestedCloudKitSync

/// Kills a real process (`SyncCrashWriter`) with SIGKILL during local saves, during an upload and between the
/// server's answer and the local commit; then checks that no acknowledged write was lost and nothing was
/// duplicated.
@Suite("Sync: kill -9")
struct SyncCrashTests {
    struct CrashNote: CKCodable, Identifiable, Equatable {
        var id: String
        var text: String

        var cloudKitRecordType: String { "Note" }
    }

    @Test(arguments: [1, 25, 60])
    func aKillDuringLocalSavesLosesNoAcknowledgedSave(killAfter: Int) async throws {
        let (storePath, serverPath) = (temporaryPath("store"), temporaryPath("server"))
        let output = try await run(storePath, serverPath, mode: "saves", count: 20_000) { output in
            output.contains("saved \(killAfter)\n")
        }
        let acknowledged = output.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("saved ") ? "n" + line.dropFirst("saved ".count) : nil
        }
        #expect(acknowledged.count > killAfter)
        let store = try SyncStore(path: storePath)
        let local = Set(try await store.records(ofType: "Note").map(\.id.recordName))
        #expect(
            Set(acknowledged).isSubset(of: local), "acknowledged saves lost: \(Set(acknowledged).subtracting(local))")
        #expect(Set(try await store.pendingChanges().map(\.recordID.recordName)) == local)

        let server = try SQLiteCloudDatabase(path: serverPath)
        try await SyncEngine(store: store, database: server).sync()
        #expect(try await store.pendingChanges().isEmpty)
        #expect(try await serverRecordNames(server, store: store) == local)
    }

    @Test(arguments: ["during-upload", "after-answer"])
    func aKillDuringASyncLosesNothingAndDuplicatesNothing(mode: String) async throws {
        let (storePath, serverPath) = (temporaryPath("store"), temporaryPath("server"))
        let output = try await run(storePath, serverPath, mode: mode, count: 30) { _ in false }
        #expect(output.contains("saved all"))
        #expect(!output.contains("synced"))

        let store = try SyncStore(path: storePath)
        #expect(try await store.pendingChanges().count == 30)
        let server = try SQLiteCloudDatabase(path: serverPath)
        let expected = Set((0..<30).map { "n\($0)" })
        if mode == "after-answer" {
            // The server has the upload; the store doesn't know.
            #expect(try await serverRecordNames(server, store: store) == expected)
        }
        let engine = SyncEngine(store: store, database: server)
        let events = await engine.events()
        try await engine.sync()
        #expect(try await store.pendingChanges().isEmpty)
        #expect(try await serverRecordNames(server, store: store) == expected)
        let notes = try await store.fetchAll(CrashNote.self, recordType: "Note")
        #expect(notes.count == 30)
        #expect(notes.allSatisfy { $0.text == "note \($0.id.dropFirst())" })
        // A lost answer is our own write, recognised: no conflict.
        await engine.stop()
        var resolutions = 0
        for await event in events {
            if case .conflictResolved = event { resolutions += 1 }
            if case .syncFinished = event { break }
        }
        #expect(resolutions == 0)
    }

    // MARK: Helpers

    private func serverRecordNames(_ server: SQLiteCloudDatabase, store: SyncStore) async throws -> Set<String> {
        var names: Set<String> = []
        var page = try await server.records(
            matching: CloudQuery(recordType: "Note"), inZoneWith: store.zoneID, desiredKeys: [], resultsLimit: 200)
        while true {
            for (id, _) in page.matchResults { names.insert(id.recordName) }
            guard let cursor = page.queryCursor else { return names }
            page = try await server.records(continuingMatchFrom: cursor, desiredKeys: [], resultsLimit: 200)
        }
    }

    private func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("sync-crash-\(name)-\(UUID()).sqlite").path
    }

    /// Runs the writer until `stop` says so (then kills it) or until it ends (or kills itself); returns its output.
    private func run(
        _ storePath: String, _ serverPath: String, mode: String, count: Int, stop: @escaping (String) -> Bool
    ) async throws -> String {
        let process = try ChildProcess(
            try writerURL(), arguments: [storePath, serverPath, mode, String(count)], standardError: .inherited)
        var output = ""
        while true {
            let chunk = await process.nextOutput()
            if chunk.isEmpty { break }
            output += String(decoding: chunk, as: UTF8.self)
            if stop(output) {
                process.send(SIGKILL)
                break
            }
        }
        let (termination, rest) = await offCooperativeThreads {
            (process.waitForExit(), process.output.readAll())
        }
        output += String(decoding: rest, as: UTF8.self)
        #expect(termination.exitStatus == nil, "the writer ended by itself: \(output)")
        return output
    }

    private func writerURL() throws -> URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [directory, directory.deletingLastPathComponent()].map {
            $0.appendingPathComponent("SyncCrashWriter")
        }
        return try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
            "SyncCrashWriter isn't built beside \(directory.path)")
    }

    /// Runs blocking work on a thread of its own, off Swift's cooperative threads.
    private func offCooperativeThreads<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}
