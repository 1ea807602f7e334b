import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitSQLite
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What only a file can do: survive a restart, a killed process, many tasks at once, and files that aren't ours.
@Suite("SQLite durability")
struct SQLiteDurabilityTests {
    @Test func everythingSavedComesBackAfterClosingAndReopening() async throws {
        let path = temporaryDatabasePath()
        let zone = CloudRecord.ZoneID(zoneName: "Schools")
        do {
            let database = try SQLiteCloudDatabase(path: path)
            _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
            try await database.saveRecords(try CKRecordEncoder(zoneID: zone).encode(School.example))
            try database.close()
        }
        let reopened = try SQLiteCloudDatabase(path: path)
        #expect(try await reopened.allRecordZones() == [.default, zone].sorted { $0.zoneName < $1.zoneName })
        let root = try await reopened.record(for: CloudRecord.ID(recordName: "school-1", zoneID: zone))
        let school = try await CKRecordDecoder().decode(School.self, from: root, referenceDatabase: reopened)
        #expect(school == School.example)
        // Change tags keep counting after a restart, so a new save never repeats an old tag.
        let updated = try await reopened.save(root)
        #expect(updated.systemFields?.changeTag != root.systemFields?.changeTag)
    }

    @Test func aProcessKilledInTheMiddleOfASaveLeavesAllOfItOrNone() async throws {
        let writer = try crashWriterURL()
        let count = 20_000
        var killedWhileWriting = 0
        // Kill while the save is planning (nothing written yet), and while it is writing: SQLite spills the
        // transaction's pages into the WAL file before it commits, so a WAL past 1 MB means half-written data.
        for moment in [KillMoment.afterStarting, .whileWriting(walBytes: 1 << 20), .whileWriting(walBytes: 4 << 20)] {
            let path = temporaryDatabasePath("crash")
            let baseline = try SQLiteCloudDatabase(path: path)
            _ = try await baseline.save(record("Note", "kept", ["text": .string("before")]))
            try baseline.close()

            let outcome = try await runAndKill(
                writer, arguments: [path, String(count)], at: moment, walPath: path + "-wal")
            if case .whileWriting = moment, !outcome.finished { killedWhileWriting += 1 }

            let database = try SQLiteCloudDatabase(path: path, maximumItemsPerRequest: count)
            #expect(try await database.record(for: CloudRecord.ID(recordName: "kept"))["text"] == .string("before"))
            let zone = CloudRecord.ZoneID(zoneName: "Crash")
            let stored = try await database.records(
                matching: CloudQuery(recordType: "Item"), inZoneWith: zone,
                desiredKeys: ["index"], resultsLimit: CloudQuery.maximumResults)
            #expect(
                stored.matchResults.count == 0 || stored.matchResults.count == count,
                "killed \(moment): \(stored.matchResults.count) of \(count) records")
            #expect(outcome.finished == (stored.matchResults.count == count))
            // The change log is committed with the records it logs: it lists exactly what is stored.
            if try await database.allRecordZones().contains(zone) {
                let logged = try await database.recordZoneChanges(
                    inZoneWith: zone, since: nil, desiredKeys: [], resultsLimit: nil)
                #expect(
                    logged.modifications.count == stored.matchResults.count && !logged.moreComing,
                    "killed \(moment): \(logged.modifications.count) logged, \(stored.matchResults.count) stored")
            }
        }
        #expect(killedWhileWriting > 0, "no run was killed while the save was writing")
    }

    @Test func eightTasksSavingAndReadingThousandsOfRecordsLoseNothing() async throws {
        let path = temporaryDatabasePath("concurrent")
        let database = try SQLiteCloudDatabase(path: path)
        let perTask = 500
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for batch in 0..<(perTask / 100) {
                        let records = (0..<100).map { index in
                            record(
                                "Item", "t\(task)-\(batch * 100 + index)",
                                ["task": .int64(Int64(task)), "index": .int64(Int64(index))])
                        }
                        try await database.saveRecords(records)
                        // Read back while the other tasks write.
                        let fetched = try await database.fetchRecords(records.map(\.id))
                        #expect(fetched.values.allSatisfy { (try? $0.get()) != nil })
                    }
                }
            }
            try await group.waitForAll()
        }
        let reopened = try SQLiteCloudDatabase(path: path, maximumItemsPerRequest: 10_000)
        let all = try await reopened.records(
            matching: CloudQuery(recordType: "Item"), inZoneWith: .default,
            desiredKeys: ["task"], resultsLimit: CloudQuery.maximumResults)
        #expect(all.matchResults.count == 8 * perTask)
        #expect(Set(all.matchResults.map(\.0.recordName)).count == 8 * perTask)
    }

    @Test func fileThatIsNotADatabaseIsRefusedAndLeftUntouched() throws {
        let path = temporaryDatabasePath("garbage")
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        #expect(throws: SQLiteCloudDatabase.OpenError.notADatabase(path: path)) { try SQLiteCloudDatabase(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test func anotherProgramsDatabaseIsRefusedAndLeftUntouched() throws {
        let path = temporaryDatabasePath("foreign")
        let foreign = try DatabaseQueue(path: path)
        try foreign.write {
            try $0.execute(
                sql: "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5)")
        }
        try foreign.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        #expect(throws: SQLiteCloudDatabase.OpenError.foreignDatabase(path: path)) {
            try SQLiteCloudDatabase(path: path)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func fileFromANewerSchemaIsRefusedAndLeftUntouched() throws {
        let path = temporaryDatabasePath("newer")
        try SQLiteCloudDatabase(path: path).close()
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA user_version = 99") }
        try queue.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let error = #expect(throws: SQLiteCloudDatabase.OpenError.self) { try SQLiteCloudDatabase(path: path) }
        #expect(error == .unsupportedSchemaVersion(path: path, found: 99, supported: 3))
        #expect(error?.schemaVersions?.found == 99 && error?.schemaVersions?.supported == 3)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func aFileSQLiteCantOpenCarriesSQLitesErrorAndItsPath() throws {
        let path = "/nonexistent-folder-\(UUID().uuidString)/database.sqlite"
        let error = try #require(throws: SQLiteCloudDatabase.OpenError.self) { try SQLiteCloudDatabase(path: path) }
        #expect(error.code == .cannotOpen)
        #expect(error.path == path)
        #expect((error.underlyingError as? DatabaseError)?.resultCode == .SQLITE_CANTOPEN)
        #expect(error.reason?.isEmpty == false)
        #expect(error == .cannotOpen(path: path, reason: error.reason ?? ""))
    }

    @Test func openErrorsSayWhatToDo() {
        #expect(
            SQLiteCloudDatabase.OpenError.foreignDatabase(path: "/a.sqlite").description
                == "/a.sqlite is a SQLite database of another program; it was left untouched: choose another path")
    }

    struct Document: CKCodable, Identifiable, Equatable {
        var id: String
        var cover: Data
        var pages: [Data]
    }

    @Test func assetsSurviveAReopenAndGoWithTheirRecord() async throws {
        let path = temporaryDatabasePath("assets")
        let source = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nckc-asset-\(UUID().uuidString).bin")
        try Data([7, 7, 7]).write(to: source)
        var encoder = CKRecordEncoder()
        encoder.dataEncodingStrategy = .asset
        let document = Document(id: "doc", cover: Data([1, 2, 3]), pages: [Data([4]), Data([5, 6])])
        do {
            let database = try SQLiteCloudDatabase(path: path)
            try await database.saveRecords(try encoder.encode(document))
            var withFile = record("Attachment", "file", ["blob": .asset(CloudAsset(fileURL: source))])
            withFile["size"] = .int64(3)
            _ = try await database.save(withFile)
            try database.close()
        }
        // The source file can go: the database keeps its own copy.
        try FileManager.default.removeItem(at: source)

        let database = try SQLiteCloudDatabase(path: path)
        let root = try await database.record(for: CloudRecord.ID(recordName: "doc"))
        #expect(try CKRecordDecoder().decode(Document.self, from: root, records: []) == document)
        let attachment = try await database.record(for: CloudRecord.ID(recordName: "file"))
        guard case .asset(let asset)? = attachment["blob"], let file = asset.fileURL else {
            Issue.record("no asset file in \(attachment)")
            return
        }
        #expect(try Data(contentsOf: file) == Data([7, 7, 7]))
        // Beside the database, named as the sync store names its folder.
        #expect(
            file.deletingLastPathComponent().standardizedFileURL.path
                == URL(fileURLWithPath: path + "-assets").standardizedFileURL.path)

        try await database.deleteRecord(withID: attachment.id)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        try database.close()
        let queue = try DatabaseQueue(path: path)
        let remaining = try await queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM asset") }
        #expect(remaining == 3)  // the document's cover and two pages; the attachment's content went with it
    }

    /// `/dev/zero` would be read forever: a file that isn't regular fails its record at once.
    @Test(arguments: ["/nonexistent/file.bin", "/dev/zero"])
    func unreadableAssetFileFailsThatRecordOnly(path: String) async throws {
        let database = try SQLiteCloudDatabase(path: temporaryDatabasePath("missing-asset"))
        let missing = record("Attachment", "missing", ["blob": .asset(CloudAsset(fileURL: URL(fileURLWithPath: path)))])
        let fine = record("Note", "fine", [:])
        let results = try await database.modifyRecords(
            saving: [missing, fine], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: false)
        guard case .invalidArguments(let reason)? = results.saveResults[missing.id]?.failureKind else {
            Issue.record("unexpected \(String(describing: results.saveResults[missing.id]))")
            return
        }
        #expect(reason == "\(missing.id)'s field blob: the asset's file \(path) isn't a regular file")
        #expect((try? results.saveResults[fine.id]?.get()) != nil)
    }

    // MARK: Helpers

    /// The crash writer built beside the test bundle.
    func crashWriterURL() throws -> URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [directory, directory.deletingLastPathComponent()].map {
            $0.appendingPathComponent("SQLiteCrashWriter")
        }
        return try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
            "SQLiteCrashWriter isn't built beside \(directory.path)")
    }

    enum KillMoment: CustomStringConvertible {
        /// As soon as the save starts.
        case afterStarting
        /// Once the WAL file holds this many bytes of the transaction.
        case whileWriting(walBytes: Int)

        var description: String {
            switch self {
            case .afterStarting: "after starting"
            case .whileWriting(let bytes): "with \(bytes) bytes in the WAL"
            }
        }
    }

    /// Runs the program until it prints "saving", then kills it with SIGKILL at the given moment; returns
    /// whether it had finished the save by then.
    func runAndKill(_ program: URL, arguments: [String], at moment: KillMoment, walPath: String) async throws -> (
        finished: Bool, output: String
    ) {
        let process = try ChildProcess(program, arguments: arguments, standardError: .inherited)
        var output = ""
        while !output.contains("saving") {
            let chunk = await process.nextOutput()
            guard !chunk.isEmpty else { break }
            output += String(decoding: chunk, as: UTF8.self)
        }
        if case .whileWriting(let bytes) = moment {
            // Bounded: the save takes seconds at most; stop watching if the process ends first.
            let deadline = ContinuousClock.now + .seconds(60)
            while !process.hasExited, ContinuousClock.now < deadline {
                let size = (try? FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int) ?? 0
                if size >= bytes { break }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
        process.send(SIGKILL)
        let rest = await offCooperativeThreads {
            process.waitForExit()
            return process.output.readAll()
        }
        output += String(decoding: rest, as: UTF8.self)
        return (output.contains("saved"), output)
    }

    /// Runs blocking work on a thread of its own: Swift's cooperative threads are as many as the cores, and the
    /// tests that serve HTTP on them in parallel would stall while one waits here.
    func offCooperativeThreads<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}
