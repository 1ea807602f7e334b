import Foundation
import NestedCloudKitCodable
import NestedCloudKitRules
import NestedCloudKitSQLite
import NestedCloudKitServer
import TestSupport
import Testing

/// What only the directory of SQLite files adds to the shared database's rules (which run against every server in
/// `SharedDatabaseConformanceTests`): it survives restarts, its shared copies catch up after a crash, and a shared
/// record's assets are copied with it.
@Suite("SQLite server: users sharing through files")
struct SQLiteCloudServerTests {
    static let lists = CloudRecord.ZoneID(zoneName: "Lists")
    static let alicesLists = CloudRecord.ZoneID(zoneName: "Lists", ownerName: "_alice")
    let directory = temporaryDatabasePath("server")

    static func item(_ name: String, fields: CloudRecord.Fields = [:]) -> CloudRecord {
        var record = CloudRecord(
            recordType: "Item", id: CloudRecord.ID(recordName: name, zoneID: lists), fields: fields)
        record.parentID = CloudRecord.ID(recordName: "groceries", zoneID: lists)
        return record
    }

    /// Alice's list with milk, shared with bob, who accepted.
    func aliceSharesHerList(on server: SQLiteCloudServer) async throws {
        let alice = try server.privateDatabase(of: "_alice")
        _ = try await alice.modifyRecordZones(saving: [Self.lists], deleting: [])
        let list = CloudRecord(recordType: "List", id: CloudRecord.ID(recordName: "groceries", zoneID: Self.lists))
        var share = try CloudShare(rootRecord: list)
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        let results = try await alice.modifyRecords(
            saving: [list, Self.item("milk"), share.record], deleting: [], savePolicy: .ifServerRecordUnchanged,
            atomically: true)
        let saved = try CloudShare(record: try #require(results.saveResults[share.id]).get())
        _ = try await server.sharedDatabase(of: "_bob").acceptShare(shortGUID: try #require(saved.shortGUID))
    }

    /// A user's file is opened once, by the first request, without a lock held while it is: the requests that
    /// arrive meanwhile wait for that open, and every one of them writes into the same file.
    @Test func concurrentFirstRequestsShareOneOpenOfTheFile() async throws {
        let server = try SQLiteCloudServer(directory: directory)
        let carol = try server.privateDatabase(of: "_carol")
        let names = (0..<20).map { "note-\($0)" }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for name in names {
                group.addTask {
                    _ = try await carol.save(
                        CloudRecord(recordType: "Note", id: CloudRecord.ID(recordName: name)), savePolicy: .allKeys)
                }
            }
            try await group.waitForAll()
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sqlite") }
        #expect(files == ["private-_carol.sqlite"])
        let fetched = try await carol.records(for: names.map { CloudRecord.ID(recordName: $0) })
        #expect(fetched.values.allSatisfy { (try? $0.get()) != nil })
        #expect(fetched.count == 20)
        try await server.close()
        let reopened = try SQLiteCloudServer(directory: directory)
        let again = try await reopened.privateDatabase(of: "_carol").records(
            for: names.map { CloudRecord.ID(recordName: $0) })
        #expect(again.values.compactMap { try? $0.get().id.recordName }.sorted() == names.sorted())
        try await reopened.close()
    }

    @Test func everyUsersDatabasesSurviveARestart() async throws {
        let server = try SQLiteCloudServer(directory: directory)
        try await aliceSharesHerList(on: server)
        let token = try await server.sharedDatabase(of: "_bob").recordZoneChanges(
            inZoneWith: Self.alicesLists, since: nil
        ).changeToken
        try await server.close()

        let reopened = try SQLiteCloudServer(directory: directory)
        let bob = try reopened.sharedDatabase(of: "_bob")
        #expect(try await bob.allRecordZones() == [Self.alicesLists])
        #expect(try await bob.userRecordName() == "_bob")
        _ = try await bob.save(
            Self.item("eggs").movingZones { $0.sharedName(ownedBy: "_alice") }, savePolicy: .ifServerRecordUnchanged)
        let changes = try await bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: token)
        #expect(changes.modifications.map(\.id.recordName) == ["eggs"])
        let eggs = try await reopened.privateDatabase(of: "_alice").record(
            for: CloudRecord.ID(recordName: "eggs", zoneID: Self.lists))
        #expect(eggs.systemFields?.lastModifiedUserRecordName == "_bob")
    }

    @Test func aSharedCopyLeftBehindByACrashCatchesUpWhenTheServerOpens() async throws {
        let server = try SQLiteCloudServer(directory: directory)
        try await aliceSharesHerList(on: server)
        try await server.close()
        // A write to alice's file whose refresh of bob's copy never ran, as if the process died between the two.
        let alicesFile = try SQLiteCloudDatabase(
            path: URL(fileURLWithPath: directory).appendingPathComponent("private-_alice.sqlite").path)
        _ = try await alicesFile.save(Self.item("bread"))
        try alicesFile.close()

        let reopened = try SQLiteCloudServer(directory: directory)
        let bread = try await reopened.sharedDatabase(of: "_bob").record(
            for: CloudRecord.ID(recordName: "bread", zoneID: Self.alicesLists))
        #expect(bread.parentID == CloudRecord.ID(recordName: "groceries", zoneID: Self.alicesLists))
    }

    @Test func aSharedRecordsAssetIsCopiedForTheParticipant() async throws {
        let server = try SQLiteCloudServer(directory: directory)
        try await aliceSharesHerList(on: server)
        let photo = Data("a photo of the milk".utf8)
        _ = try await server.privateDatabase(of: "_alice").save(
            Self.item("photo", fields: ["image": .asset(CloudAsset(data: photo))]))

        let shared = try await server.sharedDatabase(of: "_bob").record(
            for: CloudRecord.ID(recordName: "photo", zoneID: Self.alicesLists))
        guard case .asset(let asset) = shared.fields["image"] else {
            Issue.record("the shared photo has no asset: \(shared.fields)")
            return
        }
        #expect(try asset.contents() == photo)
    }

    @Test func aSingleUsersFileUnderAUsersNameBecomesTheirsWithItsRecords() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = URL(fileURLWithPath: directory).appendingPathComponent("private-_bob.sqlite").path
        let file = try SQLiteCloudDatabase(path: path)
        _ = try await file.save(CloudRecord(recordType: "Note", id: CloudRecord.ID(recordName: "mine")))
        try file.close()

        let server = try SQLiteCloudServer(directory: directory)
        let bob = try server.privateDatabase(of: "_bob")
        #expect(try await bob.record(for: CloudRecord.ID(recordName: "mine")).recordType == "Note")
        #expect(try await bob.userRecordName() == "_bob")
        #expect(
            try await server.privateDatabase(of: "_alice").records(for: [CloudRecord.ID(recordName: "mine")])
                .values.first.map { (try? $0.get()) == nil } == true)
    }

    @Test func aWriteToAZoneNoShareShowsOpensNoFileForTheOwnerItNames() async throws {
        let server = try SQLiteCloudServer(directory: directory)
        let madeUp = CloudRecord.ZoneID(zoneName: "Lists", ownerName: "zzz")
        let record = CloudRecord(recordType: "Item", id: CloudRecord.ID(recordName: "x", zoneID: madeUp))
        let results = try await server.sharedDatabase(of: "_bob").modifyRecords(
            saving: [record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: false)
        #expect(throws: CloudDatabaseError.zoneNotFound(madeUp)) { try results.saveResults[record.id]?.get() }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!files.contains { $0.contains("zzz") }, "\(files)")
    }

    @Test func otherFilesInTheDirectoryAreLeftAloneAndDontKeepItFromOpening() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let notes = URL(fileURLWithPath: directory).appendingPathComponent("notes.sqlite")
        try Data("not a database".utf8).write(to: notes)
        let server = try SQLiteCloudServer(directory: directory)
        try await aliceSharesHerList(on: server)
        #expect(try Data(contentsOf: notes) == Data("not a database".utf8))
    }

    @Test func twoFilesOfOneUserKeepTheServerFromOpeningRatherThanHideOne() async throws {
        let server = try SQLiteCloudServer(directory: directory)
        _ = try await server.privateDatabase(of: "_alice").save(
            CloudRecord(recordType: "Note", id: CloudRecord.ID(recordName: "note")))
        try await server.close()
        let folder = URL(fileURLWithPath: directory)
        for suffix in ["", "-wal"]
        where FileManager.default.fileExists(
            atPath: folder.appendingPathComponent("private-_alice.sqlite\(suffix)").path)
        {
            try FileManager.default.copyItem(
                at: folder.appendingPathComponent("private-_alice.sqlite\(suffix)"),
                to: folder.appendingPathComponent("private-copy.sqlite\(suffix)"))
        }
        #expect {
            _ = try SQLiteCloudServer(directory: directory)
        } throws: { error in
            guard let error = error as? SQLiteCloudDatabase.OpenError, let reason = error.reason else { return false }
            return reason.contains("_alice's private database too")
        }
    }

    @Test func aSharedFileFromBeforeTheServerStartsEmpty() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = URL(fileURLWithPath: directory).appendingPathComponent("shared-_bob.sqlite").path
        let file = try SQLiteCloudDatabase(path: path)
        _ = try await file.modifyRecordZones(saving: [Self.lists], deleting: [])
        _ = try await file.save(Self.item("stray"))
        try file.close()

        let server = try SQLiteCloudServer(directory: directory)
        let bob = try server.sharedDatabase(of: "_bob")
        #expect(try await bob.allRecordZones() == [])
        #expect(try await bob.databaseChanges(since: nil).modifiedZoneIDs == [])
    }

    /// A close while users' first requests open their files waits for those opens: each request either wrote
    /// before the close, and its record is in the file the next server opens, or failed with the closed server's
    /// error; none writes into a file after the close returned.
    @Test func aCloseDuringFirstOpensWaitsForThemAndLosesNoAcknowledgedWrite() async throws {
        let server = try SQLiteCloudServer(directory: directory)
        let users = (0..<8).map { "_user\($0)" }
        let (answers, answered) = AsyncStream.makeStream(of: (user: String, saved: Bool).self)
        let writes = Task {
            await withTaskGroup(of: Void.self) { group in
                for user in users {
                    group.addTask {
                        let saved = try? await server.privateDatabase(of: user).save(
                            CloudRecord(recordType: "Note", id: CloudRecord.ID(recordName: "first")),
                            savePolicy: .allKeys)
                        answered.yield((user, saved != nil))
                    }
                }
            }
            answered.finish()
        }
        // Closed once one write is acknowledged, while the others' files are still being opened or written.
        var acknowledged: [String: Bool] = [:]
        var iterator = answers.makeAsyncIterator()
        while let answer = await iterator.next() {
            acknowledged[answer.user] = answer.saved
            if answer.saved { break }
        }
        try await server.close()
        await writes.value
        while let answer = await iterator.next() { acknowledged[answer.user] = answer.saved }
        #expect(acknowledged.count == users.count)
        #expect(acknowledged.values.contains(true))
        let reopened = try SQLiteCloudServer(directory: directory)
        for user in users where acknowledged[user] == true {
            let fetched = try await reopened.privateDatabase(of: user).records(
                for: [CloudRecord.ID(recordName: "first")])
            #expect((try? fetched[CloudRecord.ID(recordName: "first")]?.get()) != nil, "\(user)")
        }
        try await reopened.close()
    }

    @Test func aClosedServerOpensNoFileAgain() async throws {
        let server = try SQLiteCloudServer(directory: directory)
        try await server.close()
        await #expect(throws: CloudDatabaseError.self) {
            _ = try await server.privateDatabase(of: "_carol").allRecordZones()
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!files.contains { $0.contains("_carol") })
    }
}
