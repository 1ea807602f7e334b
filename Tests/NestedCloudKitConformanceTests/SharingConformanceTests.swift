import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// A record's parent travels through every server, and every server saves shares under CloudKit's rules. (The local
/// store's zones are its engine's; its stored form of parents and shares is tested with the store.)
@Suite("Database conformance: parents and shares", .stopsEmulators)
struct SharingConformanceTests {
    static let lists = CloudRecord.ZoneID(zoneName: "Lists")

    func listAndItem(parented: Bool = true) -> (list: CloudRecord, item: CloudRecord) {
        let list = record("List", "groceries", ["name": .string("Groceries")], zone: Self.lists)
        var item = record("Item", "milk", ["name": .string("Milk")], zone: Self.lists)
        if parented { item.parentID = list.id }
        return (list, item)
    }

    func makeDatabase(_ backend: DatabaseBackend) async throws -> any CloudDatabase {
        let database = try await backend.makeDatabase()
        _ = try await database.modifyRecordZones(saving: [Self.lists], deleting: [])
        return database
    }

    // MARK: Parents

    @Test(arguments: DatabaseBackend.servers)
    func aParentIsKeptAndCanBeTakenAway(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let (list, item) = listAndItem()
        _ = try await database.modifyRecords(
            saving: [list, item], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)

        var fetched = try await database.record(for: item.id)
        #expect(fetched.parentID == list.id)
        #expect(try await database.record(for: list.id).parentID == nil)

        fetched.parentID = nil
        _ = try await database.save(fetched, savePolicy: .allKeys)
        #expect(try await database.record(for: item.id).parentID == nil)
    }

    @Test(arguments: DatabaseBackend.servers)
    func aParentInAnotherZoneIsRefused(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        var item = listAndItem().item
        item.parentID = CloudRecord.ID(recordName: "groceries")
        await #expect {
            _ = try await database.save(item)
        } throws: { error in
            guard case .invalidArguments(let reason)? = (error as? CloudDatabaseError)?.kind else { return false }
            return reason.contains("another zone")
        }
    }

    // MARK: Shares

    @Test(arguments: DatabaseBackend.servers)
    func aNewShareGetsAnOwnerAURLAndItsRootsShareID(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let (list, item) = listAndItem()
        var share = try CloudShare(rootRecord: list, shareID: CloudRecord.ID(recordName: "share", zoneID: Self.lists))
        share.title = "Groceries"
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))

        let results = try await database.modifyRecords(
            saving: [list, item, share.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)

        let saved = try CloudShare(record: try #require(results.saveResults[share.id]).get())
        let owner = try #require(saved.owner)
        #expect(owner.permission == .readWrite && owner.acceptanceStatus == .accepted && owner.userRecordName != nil)
        #expect(saved.participants.map(\.userRecordName) == [owner.userRecordName, "_bob"])
        #expect(saved.participants[1].acceptanceStatus == .pending)
        #expect(saved.participants[1].permission == .readWrite)
        let shortGUID = try #require(saved.shortGUID)
        #expect(shortGUID.count >= 26)
        #expect(saved.url?.absoluteString.contains(shortGUID) == true)
        #expect(saved.title == "Groceries")
        #expect(saved.rootRecordID == (backend.reportsShareRoots ? list.id : nil))
        #expect(!saved.isZoneWide)

        #expect(try await database.record(for: list.id).systemFields?.shareID == share.id)
        #expect(try await database.record(for: item.id).systemFields?.shareID == nil)
        #expect(try CloudShare(record: try await database.record(for: share.id)) == saved)
    }

    @Test(arguments: DatabaseBackend.servers)
    func savingAShareAgainKeepsItsURLAndWhatOnlyParticipantsChange(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let list = listAndItem().list
        var share = try CloudShare(rootRecord: list)
        try share.addParticipant(.init(userRecordName: "_bob"))
        let results = try await database.modifyRecords(
            saving: [list, share.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        let first = try CloudShare(record: try #require(results.saveResults[share.id]).get())

        // The owner's copy claims bob accepted and adds a public user without a public permission.
        var edited = first
        edited = try CloudShare(record: edited.record)
        var record = edited.record
        record.shareContents?.participants[1].acceptanceStatus = .accepted
        record.shareContents?.participants.append(.init(userRecordName: "_eve", role: .publicUser))
        edited = try CloudShare(record: record)
        try edited.addParticipant(.init(emailAddress: "carol@example.com", permission: .readWrite))

        let second = try CloudShare(record: try await database.save(edited.record))
        #expect(second.url == first.url)
        #expect(second.shortGUID == first.shortGUID)
        #expect(second.participants.map(\.acceptanceStatus) == [.accepted, .pending, .pending])
        #expect(second.participants.map(\.emailAddress) == [nil, nil, "carol@example.com"])
        #expect(second.owner == first.owner)
    }

    @Test(arguments: DatabaseBackend.servers)
    func aNewShareIsSavedWithItsRootRecord(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let list = listAndItem().list
        _ = try await database.save(list)
        let share = try CloudShare(rootRecord: list)
        await #expect {
            _ = try await database.save(share.record)
        } throws: { error in
            guard case .invalidArguments(let reason)? = (error as? CloudDatabaseError)?.kind else { return false }
            // Over Web Services, a share says what it shares only through its root's operation: without the
            // root, it names none.
            return reason.contains("together with its root record") || reason.contains("names no root record")
        }
        #expect(try await database.record(for: list.id).systemFields?.shareID == nil)

        var rootless = try CloudShare(zoneID: Self.lists).record
        rootless.id = CloudRecord.ID(recordName: "rootless", zoneID: Self.lists)
        await #expect {
            _ = try await database.save(rootless)
        } throws: { error in
            guard case .invalidArguments(let reason)? = (error as? CloudDatabaseError)?.kind else { return false }
            return reason.contains("names no root record")
        }
    }

    @Test(arguments: DatabaseBackend.servers)
    func aRecordHasOneShare(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let list = listAndItem().list
        let first = try CloudShare(rootRecord: list)
        _ = try await database.modifyRecords(
            saving: [list, first.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        let root = try await database.record(for: list.id)
        let second = try CloudShare(rootRecord: root)
        let results = try await database.modifyRecords(
            saving: [root, second.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        #expect(throws: CloudDatabaseError.self) { try results.saveResults[second.id]?.get() }
        #expect(try await database.record(for: list.id).systemFields?.shareID == first.id)
    }

    @Test(arguments: DatabaseBackend.servers)
    func deletingAShareUnsharesItsRootAndDeletingARootDeletesItsShare(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let (list, item) = listAndItem()
        let share = try CloudShare(rootRecord: list)
        _ = try await database.modifyRecords(
            saving: [list, item, share.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        let sharedRoot = try await database.record(for: list.id)

        try await database.deleteRecord(withID: share.id)
        let unshared = try await database.record(for: list.id)
        #expect(unshared.systemFields?.shareID == nil)
        #expect(unshared.systemFields?.changeTag != sharedRoot.systemFields?.changeTag)
        #expect(unshared.fields == sharedRoot.fields)

        let again = try CloudShare(rootRecord: unshared)
        _ = try await database.modifyRecords(
            saving: [unshared, again.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        try await database.deleteRecord(withID: list.id)
        await #expect(throws: CloudDatabaseError.unknownItem(again.id)) {
            _ = try await database.record(for: again.id)
        }
    }

    @Test(arguments: DatabaseBackend.servers)
    func aZoneWideShareNeedsNoRoot(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        let share = try CloudShare(zoneID: Self.lists)
        let saved = try CloudShare(record: try await database.save(share.record))
        #expect(saved.isZoneWide)
        #expect(saved.owner != nil)
        #expect(saved.url != nil)
    }

    @Test(arguments: DatabaseBackend.servers)
    func aShareInTheDefaultZoneOrShareStateOnAnotherRecordIsRefused(backend: DatabaseBackend) async throws {
        let database = try await makeDatabase(backend)
        var defaultZoneShare = record(CloudShare.recordType, "share", [:])
        defaultZoneShare.shareContents = nil
        var listWithShareState = listAndItem().list
        listWithShareState.shareContents = try CloudShare(zoneID: Self.lists).record.shareContents
        for refused in [defaultZoneShare, listWithShareState] {
            await #expect(throws: CloudDatabaseError.self) { _ = try await database.save(refused) }
        }
    }
}
