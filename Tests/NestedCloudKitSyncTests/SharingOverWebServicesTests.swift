import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import NestedCloudKitEmulator
import NestedCloudKitServer
import NestedCloudKitWebServices
import Testing

@testable import NestedCloudKitSync

/// Alice shares a shopping list with bob through CloudKit Web Services and the emulator: each user's device syncs
/// its private and shared databases over loopback HTTP, as a Linux or server app does.
@Suite("Sync: sharing between users through Web Services and the emulator", .stopsEmulators)
struct SharingOverWebServicesTests {
    typealias ShoppingList = SharingSyncTests.ShoppingList
    typealias Item = SharingSyncTests.Item

    static let container = "iCloud.com.example.Sharing"
    let clock = VirtualCloudClock()
    let emulator: CloudKitEmulator

    init() async throws {
        emulator = try await CloudKitEmulator.start(EmulatorConfiguration(clock: clock))
    }

    /// A new client of a user's database, with a web auth token of its own.
    func database(_ user: String, _ scope: CloudKitWebServicesConfiguration.Database) async throws
        -> CloudKitWebServicesDatabase
    {
        try CloudKitWebServicesDatabase(
            configuration: CloudKitWebServicesConfiguration(
                containerIdentifier: Self.container, environment: .development, database: scope,
                authentication: .apiToken("api-token", webAuthToken: await emulator.signIn(user: user)),
                serverURL: emulator.url, retryPolicy: .never, requestTimeout: .seconds(120)))
    }

    func device(_ user: String) async throws -> Device {
        try await Device(
            server: try await database(user, .private), sharedDatabase: try await database(user, .shared),
            clock: clock)
    }

    func item(_ id: String, in zone: CloudRecord.ZoneID) -> Item {
        Item(
            id: id, name: id, list: CloudLazyReference(recordID: CloudRecord.ID(recordName: "groceries", zoneID: zone)))
    }

    func names(in device: Device, zone: CloudRecord.ZoneID) async throws -> [String] {
        try await device.store.records(ofType: "Item", in: zone).compactMap {
            if case .string(let name)? = $0.fields["name"] { name } else { nil }
        }.sorted()
    }

    @Test func aliceSharesHerListWithBobWhoEditsItUntilSheRemovesHim() async throws {
        let alice = try await device("alice")
        let bob = try await device("bob")
        let zone = alice.store.zoneID
        try await alice.store.save(ShoppingList(id: "groceries", name: "Groceries"))
        try await alice.store.save(item("milk", in: zone))
        try await alice.sync()

        // Alice shares the list with bob, read-write, from her private database.
        let alicesDatabase = try await database("alice", .private)
        let aliceRecordName = try await alicesDatabase.userRecordName()
        let bobRecordName = try await database("bob", .private).userRecordName()
        let root = try await alicesDatabase.record(for: CloudRecord.ID(recordName: "groceries", zoneID: zone))
        var share = try CloudShare(rootRecord: root)
        try share.addParticipant(.init(userRecordName: bobRecordName, permission: .readWrite))
        let saved = try await alicesDatabase.modifyRecords(
            saving: [root, share.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        let savedShare = try CloudShare(record: try #require(saved.saveResults[share.id]).get())
        let shortGUID = try #require(savedShare.shortGUID)

        // Bob resolves the URL, accepts, and syncs: the list is in his store, in alice's zone.
        let bobsShared = try await database("bob", .shared)
        let metadata = try await bobsShared.shareMetadata(shortGUID: shortGUID, fetchingRootRecord: true)
        #expect(metadata.participantStatus == .pending)
        #expect(metadata.participantPermission == .readWrite)
        #expect(metadata.ownerUserRecordName == aliceRecordName)
        #expect(metadata.rootRecord?.fields["name"] == .string("Groceries"))
        try await bobsShared.acceptShare(shortGUID: shortGUID)
        try await bob.sync()
        let bobsView = CloudRecord.ZoneID(zoneName: zone.zoneName, ownerName: aliceRecordName)
        #expect(try await bob.store.fetch(ShoppingList.self, id: "groceries", in: bobsView)?.name == "Groceries")
        #expect(try await names(in: bob, zone: bobsView) == ["milk"])

        // Bob adds eggs; alice sees them, added by bob, under her list.
        try await bob.store.save(item("eggs", in: bobsView), in: bobsView)
        try await bob.sync()
        try await alice.sync()
        #expect(try await names(in: alice, zone: zone) == ["eggs", "milk"])
        let eggs = try await alicesDatabase.record(for: CloudRecord.ID(recordName: "eggs", zoneID: zone))
        #expect(eggs.systemFields?.creatorUserRecordName == bobRecordName)

        // Alice removes bob: his copy goes, with an event.
        var current = try CloudShare(record: try await alicesDatabase.record(for: share.id))
        let bobAsParticipant = try #require(current.participants.first { $0.userRecordName == bobRecordName })
        current.removeParticipant(bobAsParticipant)
        try await alicesDatabase.save(current.record)
        try await bob.sync()
        #expect(bob.recorder.events.contains(.sharedZoneRemoved(bobsView, discardedChanges: 0)))
        #expect(try await names(in: bob, zone: bobsView) == [])
    }

    @Test func carolJoinsAZoneWidePublicShareFromItsURLAndHerReadOnlyWriteIsRefusedOnHerDevice() async throws {
        let alice = try await device("alice")
        let carol = try await device("carol")
        let zone = alice.store.zoneID
        try await alice.store.save(ShoppingList(id: "groceries", name: "Groceries"))
        try await alice.store.save(Item(id: "loose", name: "loose", list: nil))
        try await alice.sync()

        // The whole zone, to anyone with the URL, read-only.
        let alicesDatabase = try await database("alice", .private)
        var share = try CloudShare(zoneID: zone)
        share.publicPermission = .readOnly
        let saved = try await alicesDatabase.save(share.record)
        let url = try #require(try CloudShare(record: saved).url)
        #expect(url.absoluteString.hasPrefix(emulator.url.absoluteString + "/share/"))

        let carolsShared = try await database("carol", .shared)
        let metadata = try await carolsShared.shareMetadata(shortGUID: url.lastPathComponent)
        #expect(metadata.participantRole == .publicUser)
        #expect(metadata.participantPermission == .readOnly)
        try await carolsShared.acceptShare(shortGUID: url.lastPathComponent)
        try await carol.sync()
        let carolsView = CloudRecord.ZoneID(
            zoneName: zone.zoneName, ownerName: try await alicesDatabase.userRecordName())
        // A zone-wide share covers records without a parent too.
        #expect(try await names(in: carol, zone: carolsView) == ["loose"])
        #expect(try await carol.store.fetch(ShoppingList.self, id: "groceries", in: carolsView)?.name == "Groceries")

        await #expect {
            try await carol.store.save(ShoppingList(id: "groceries", name: "Mine now"), in: carolsView)
        } throws: { error in
            guard let error = error as? SyncError, error.code == .sharePermissionDenied,
                let id = error.recordID, let reason = error.reason
            else { return false }
            return id.recordName == "groceries" && reason.contains("read-only")
        }
        #expect(try await carol.engine.status().pendingChanges == 0)
        try await carol.sync()
        #expect(try await alice.store.fetch(ShoppingList.self, id: "groceries")?.name == "Groceries")
    }

    @Test func bothEditOfflineThroughWebServicesAndConverge() async throws {
        let alice = try await device("alice")
        let bob = try await device("bob")
        let zone = alice.store.zoneID
        try await alice.store.save(ShoppingList(id: "groceries", name: "Groceries"))
        try await alice.store.save(item("milk", in: zone))
        try await alice.sync()
        // This time through alice's engine, which saves the share over Web Services and stores the answer.
        let alicesDatabase = try await database("alice", .private)
        let bobRecordName = try await database("bob", .private).userRecordName()
        let share = try await alice.engine.share(CloudRecord.ID(recordName: "groceries", zoneID: zone)) {
            try $0.addParticipant(.init(userRecordName: bobRecordName, permission: .readWrite))
        }
        try await database("bob", .shared).acceptShare(shortGUID: try #require(share.shortGUID))
        try await bob.sync()
        let bobsView = CloudRecord.ZoneID(zoneName: zone.zoneName, ownerName: try await alicesDatabase.userRecordName())

        // Offline: alice adds bread and renames the milk; bob renames the list and adds eggs.
        try await alice.store.save(item("bread", in: zone))
        var milk = try #require(try await alice.store.fetch(Item.self, id: "milk"))
        milk.name = "oat milk"
        try await alice.store.save(milk)
        try await bob.store.save(ShoppingList(id: "groceries", name: "Weekend"), in: bobsView)
        try await bob.store.save(item("eggs", in: bobsView), in: bobsView)
        try await alice.sync()
        try await bob.sync()
        try await alice.sync()

        // A share read back over Web Services doesn't name its root; the store still tells a record share from a
        // zone-wide one, and refuses a new record outside the list before it is queued.
        await #expect(throws: SyncError.self) {
            try await bob.store.save(Item(id: "loose", name: "loose", list: nil), in: bobsView)
        }
        #expect(try await bob.engine.status().pendingChanges == 0)

        #expect(try await names(in: alice, zone: zone) == ["bread", "eggs", "oat milk"])
        #expect(try await names(in: bob, zone: bobsView) == ["bread", "eggs", "oat milk"])
        #expect(try await alice.store.fetch(ShoppingList.self, id: "groceries")?.name == "Weekend")
        #expect(try await bob.store.fetch(ShoppingList.self, id: "groceries", in: bobsView)?.name == "Weekend")
    }

    @Test func aForgedShortGUIDAndTheOwnersOwnShareAreRefusedClearly() async throws {
        let alicesShared = try await database("alice", .shared)
        await #expect {
            try await alicesShared.acceptShare(shortGUID: "forged")
        } throws: { error in
            guard case .invalidArguments(let reason)? = (error as? CloudDatabaseError)?.kind else { return false }
            return reason.contains("no share has the short GUID forged")
        }
    }
}
