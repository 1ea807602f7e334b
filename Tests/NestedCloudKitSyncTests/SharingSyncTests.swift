import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

@testable import NestedCloudKitSync

/// Alice shares a shopping list with bob; each has a device with a store and an engine on a server with several
/// users (the simulated one, and the directory of SQLite files), bob's syncing his shared database too.
@Suite("Sync: sharing between users")
struct SharingSyncTests {
    struct ShoppingList: CKCodable, Identifiable, Equatable, Sendable {
        var id: String
        var name: String
    }

    struct Item: CKCodable, Identifiable, Equatable, Sendable {
        var id: String
        var name: String
        var list: CloudLazyReference<ShoppingList>?
        var note: String = ""
        static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, parent: .list)
    }

    /// A folder of a list, with notes whose parent is the folder: saved together, the notes' records come first.
    struct Folder: CKCodable, Identifiable, Equatable, Sendable {
        var id: String
        var name: String
        var list: CloudLazyReference<ShoppingList>?
        var notes: [Note]
        static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, parent: .list)
    }

    struct Note: CKCodable, Identifiable, Equatable, Sendable {
        var id: String
        var text: String
        var folder: CloudLazyReference<Folder>?
        static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, parent: .folder)
    }

    let clock = VirtualCloudClock()
    let server: SharingServerUsers
    let alice: Device
    let bob: Device
    /// Alice's zone as she names it, and as bob does.
    let alicesZone = SyncStore.defaultZoneID
    let bobsView: CloudRecord.ZoneID

    /// On the simulated server: what Swift Testing makes before it calls each test below, which makes its own.
    init() async throws {
        try await self.init(.inMemory)
    }

    init(_ backend: SharingServerBackend, alicesPolicy: ConflictPolicy = .fieldByField) async throws {
        server = try backend.make(clock)
        alice = try await Device(
            server: try server.privateDatabase("_alice"), sharedDatabase: try server.sharedDatabase("_alice"),
            clock: clock,
            configuration: SyncConfiguration(conflictPolicy: alicesPolicy, retry: SyncRetryPolicy(jitter: 0)))
        bob = try await Device(
            server: try server.privateDatabase("_bob"), sharedDatabase: try server.sharedDatabase("_bob"),
            clock: clock)
        bobsView = CloudRecord.ZoneID(zoneName: alicesZone.zoneName, ownerName: "_alice")
    }

    func item(_ id: String, in zone: CloudRecord.ZoneID) -> Item {
        Item(
            id: id, name: id,
            list: CloudLazyReference(recordID: CloudRecord.ID(recordName: "groceries", zoneID: zone)))
    }

    /// Alice's list with milk, synced and shared with bob, who accepted and synced.
    @discardableResult
    func aliceSharesHerList(permission: CloudShare.Permission = .readWrite) async throws -> CloudShare {
        try await alice.store.save(ShoppingList(id: "groceries", name: "Groceries"))
        try await alice.store.save(item("milk", in: alicesZone))
        try await alice.sync()
        let database = try server.privateDatabase("_alice")
        let root = try await database.record(for: CloudRecord.ID(recordName: "groceries", zoneID: alicesZone))
        var share = try CloudShare(rootRecord: root)
        try share.addParticipant(.init(userRecordName: "_bob", permission: permission))
        let results = try await database.modifyRecords(
            saving: [root, share.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        let saved = try CloudShare(record: try #require(results.saveResults[share.id]).get())
        _ = try await server.sharedDatabase("_bob").acceptShare(shortGUID: try #require(saved.shortGUID))
        try await bob.sync()
        return saved
    }

    func names(in device: Device, zone: CloudRecord.ZoneID) async throws -> [String] {
        try await device.store.records(ofType: "Item", in: zone).compactMap {
            if case .string(let name)? = $0.fields["name"] { name } else { nil }
        }.sorted()
    }

    func bobSeesTheSharedListInHisStoreUnderAlicesName() async throws {
        try await aliceSharesHerList()
        let list = try await bob.store.fetch(ShoppingList.self, id: "groceries", in: bobsView)
        #expect(list?.name == "Groceries")
        #expect(try await names(in: bob, zone: bobsView) == ["milk"])
        // Nothing of alice's arrived in bob's own zone, and nothing of hers was created in his private database.
        #expect(try await bob.store.records(ofType: "Item", in: alicesZone).isEmpty)
        #expect(try await server.privateDatabase("_bob").allRecordZones().contains(bobsView) == false)
    }

    func bothEditOfflineAndConverge() async throws {
        try await aliceSharesHerList()
        // Offline: alice renames the milk, bob renames the list and adds eggs to it.
        var milk = try #require(try await alice.store.fetch(Item.self, id: "milk"))
        milk.name = "oat milk"
        try await alice.store.save(milk)
        try await bob.store.save(ShoppingList(id: "groceries", name: "Weekend"), in: bobsView)
        try await bob.store.save(item("eggs", in: bobsView), in: bobsView)

        try await bob.sync()
        try await alice.sync()
        try await bob.sync()

        #expect(try await names(in: alice, zone: alicesZone) == ["eggs", "oat milk"])
        #expect(try await names(in: bob, zone: bobsView) == ["eggs", "oat milk"])
        #expect(try await alice.store.fetch(ShoppingList.self, id: "groceries")?.name == "Weekend")
        #expect(try await bob.store.fetch(ShoppingList.self, id: "groceries", in: bobsView)?.name == "Weekend")
        let eggs = try await server.privateDatabase("_alice").record(
            for: CloudRecord.ID(recordName: "eggs", zoneID: alicesZone))
        #expect(eggs.systemFields?.creatorUserRecordName == "_bob")
        #expect(eggs.parentID == CloudRecord.ID(recordName: "groceries", zoneID: alicesZone))
    }

    func theOwnersAndTheParticipantsEditsOfOneRecordMergeByThePolicy() async throws {
        try await aliceSharesHerList()
        // Offline, both change the milk: alice its name, bob its note; then bob syncs first.
        var alicesMilk = try #require(try await alice.store.fetch(Item.self, id: "milk"))
        alicesMilk.name = "oat milk"
        try await alice.store.save(alicesMilk)
        var bobsMilk = try #require(try await bob.store.fetch(Item.self, id: "milk", in: bobsView))
        bobsMilk.note = "the big carton"
        try await bob.store.save(bobsMilk, in: bobsView)

        try await bob.sync()
        try await alice.sync()
        try await bob.sync()

        // Field by field, the default policy: each side's field is kept, on both devices and on the server.
        let merged = Item(
            id: "milk", name: "oat milk",
            list: CloudLazyReference(recordID: CloudRecord.ID(recordName: "groceries", zoneID: alicesZone)),
            note: "the big carton")
        #expect(try await alice.store.fetch(Item.self, id: "milk") == merged)
        var bobsView = merged
        bobsView.list = CloudLazyReference(recordID: CloudRecord.ID(recordName: "groceries", zoneID: self.bobsView))
        #expect(try await bob.store.fetch(Item.self, id: "milk", in: self.bobsView) == bobsView)
        #expect(alice.recorder.resolutions.map(\.recordID.recordName) == ["milk"])
    }

    func bobAddsAFolderWithItsNotesInOneSaveUnderTheSharedList() async throws {
        try await aliceSharesHerList()
        let folderID = CloudRecord.ID(recordName: "dairy", zoneID: bobsView)
        let folder = Folder(
            id: "dairy", name: "Dairy",
            list: CloudLazyReference(recordID: CloudRecord.ID(recordName: "groceries", zoneID: bobsView)),
            notes: [Note(id: "cold", text: "keep cold", folder: CloudLazyReference(recordID: folderID))])
        // The note's parent is the folder, new in the same save (and written after it): the share covers both.
        try await bob.store.save(folder, in: bobsView)
        try await bob.sync()
        try await alice.sync()
        let alicesFolder = try await alice.store.fetch(Folder.self, id: "dairy")
        #expect(alicesFolder?.notes.map(\.text) == ["keep cold"])
        let note = try await server.privateDatabase("_alice").record(
            for: CloudRecord.ID(recordName: "cold", zoneID: alicesZone))
        #expect(note.parentID == CloudRecord.ID(recordName: "dairy", zoneID: alicesZone))
    }

    func aliceAddsAnItemAndBobSeesIt() async throws {
        try await aliceSharesHerList()
        try await alice.store.save(item("bread", in: alicesZone))
        try await alice.sync()
        try await bob.sync()
        #expect(try await names(in: bob, zone: bobsView) == ["bread", "milk"])
    }

    func aReadOnlyParticipantsWriteIsRefusedAndQueuesNothing() async throws {
        try await aliceSharesHerList(permission: .readOnly)
        await #expect {
            try await bob.store.save(item("eggs", in: bobsView), in: bobsView)
        } throws: { error in
            guard let error = error as? SyncError, error.code == .sharePermissionDenied,
                let id = error.recordID, let reason = error.reason
            else { return false }
            return id == CloudRecord.ID(recordName: "eggs", zoneID: bobsView) && reason.contains("read-only")
        }
        await #expect(throws: SyncError.self) {
            try await bob.store.deleteRecords(withIDs: [CloudRecord.ID(recordName: "milk", zoneID: bobsView)])
        }
        #expect(try await bob.engine.status().pendingChanges == 0)
        #expect(try await names(in: bob, zone: bobsView) == ["milk"])
    }

    func aNewRecordOutsideTheSharedListIsRefusedBeforeItIsQueued() async throws {
        try await aliceSharesHerList()
        await #expect {
            try await bob.store.save(Item(id: "loose", name: "loose", list: nil), in: bobsView)
        } throws: { error in
            guard let error = error as? SyncError, error.code == .sharePermissionDenied, let reason = error.reason
            else { return false }
            return reason.contains("parent")
        }
        #expect(try await bob.engine.status().pendingChanges == 0)
    }

    func aliceRemovesBobAndHisCopyGoesWithAnEvent() async throws {
        let share = try await aliceSharesHerList()
        // Bob's edit, not yet sent, can't reach alice any more: it goes with the zone, never uploaded elsewhere.
        try await bob.store.save(item("eggs", in: bobsView), in: bobsView)
        let database = try server.privateDatabase("_alice")
        var current = try CloudShare(record: try await database.record(for: share.id))
        let bobAsParticipant = try #require(current.participants.first { $0.userRecordName == "_bob" })
        current.removeParticipant(bobAsParticipant)
        try await database.save(current.record)

        try await bob.sync()
        #expect(bob.recorder.events.contains(.sharedZoneRemoved(bobsView, discardedChanges: 1)))
        #expect(try await bob.store.records(ofType: "Item", in: bobsView).isEmpty)
        #expect(try await bob.store.fetch(ShoppingList.self, id: "groceries", in: bobsView) == nil)
        #expect(try await bob.engine.status().pendingChanges == 0)
        // Alice's list is as she left it, and bob's own database holds none of it.
        #expect(try await names(in: alice, zone: alicesZone) == ["milk"])
        #expect(
            try await server.privateDatabase("_bob").allRecordZones().contains { $0.zoneName == "groceries" }
                == false)
    }

    /// Bob's queued edit, new record and deletion reach a share alice made read-only meanwhile: each is refused
    /// and reverted to what the server has (the edit undone, the new record gone, the deleted one back), with an
    /// event carrying what bob had saved; his own changes go on, and nothing is left queued or halted.
    func bobsQueuedChangesToAShareMadeReadOnlyAreRevertedWithEvents() async throws {
        let share = try await aliceSharesHerList()
        try await alice.store.save(item("bread", in: alicesZone))
        try await alice.sync()
        try await bob.sync()
        var milk = try #require(try await bob.store.fetch(Item.self, id: "milk", in: bobsView))
        milk.name = "skimmed milk"
        try await bob.store.save(milk, in: bobsView)
        try await bob.store.save(item("eggs", in: bobsView), in: bobsView)
        try await bob.store.delete(Item.self, id: "bread", in: bobsView)
        try await bob.store.save(ShoppingList(id: "mine", name: "Mine"))
        // Alice makes bob read-only before his changes reach her.
        let database = try server.privateDatabase("_alice")
        var current = try CloudShare(record: try await database.record(for: share.id))
        try current.addParticipant(.init(userRecordName: "_bob", permission: .readOnly))
        try await database.save(current.record)

        try await bob.sync()
        let reverted = bob.recorder.events.compactMap { event -> (String, CloudRecord?)? in
            guard case .changeReverted(let id, let error, let discarded) = event, error.code == .permissionFailure
            else {
                return nil
            }
            return (id.recordName, discarded)
        }
        #expect(reverted.map(\.0).sorted() == ["bread", "eggs", "milk"])
        let discardedMilk = try #require(reverted.first { $0.0 == "milk" }?.1)
        #expect(discardedMilk["name"] == .string("skimmed milk"))
        #expect(reverted.first { $0.0 == "bread" }.map { $0.1 == nil } == true, "a deletion carries no record")
        // Bob's store shows what alice's does; his own list reached his database.
        #expect(try await names(in: bob, zone: bobsView) == ["bread", "milk"])
        #expect(try await bob.store.pendingChanges().isEmpty)
        #expect(
            try await server.privateDatabase("_bob").record(
                for: CloudRecord.ID(recordName: "mine", zoneID: alicesZone)
            ).recordType == "ShoppingList")
        #expect(try await names(in: alice, zone: alicesZone) == ["bread", "milk"])
        // Reverted, not halted: the next sync sends nothing and reports nothing refused.
        let next = try await bob.engine.sync()
        #expect(next.refusedChanges.isEmpty)
    }

    /// The ways an app writes a record locally; each must move a record's parent with its parent field.
    enum WritePath: String, CaseIterable, Sendable {
        case saveModel, updateModel, saveRecords, localDatabase
    }

    /// Alice moves the milk from her shared list to her own hardware list through one of the store's write paths:
    /// its record's parent moves with the field, so the share no longer covers it and bob loses it, in his store
    /// and on the server.
    func aliceMovesAnItemOutOfTheSharedList(by path: WritePath) async throws {
        try await aliceSharesHerList()
        try await alice.store.save(ShoppingList(id: "hardware", name: "Hardware"))
        let hardware = CloudRecord.ID(recordName: "hardware", zoneID: alicesZone)
        let milkID = CloudRecord.ID(recordName: "milk", zoneID: alicesZone)
        let toHardware = CloudValue.reference(CloudReference(recordID: hardware, action: .none))
        switch path {
        case .saveModel:
            var milk = try #require(try await alice.store.fetch(Item.self, id: "milk"))
            milk.list = CloudLazyReference(recordID: hardware)
            try await alice.store.save(milk)
        case .updateModel:
            try await alice.store.update(Item.self, id: "milk") { $0.list = CloudLazyReference(recordID: hardware) }
        case .saveRecords:
            // Only the field changes: the parent follows the field that named it.
            var record = try #require(try await alice.store.record(withID: milkID))
            record["list"] = toHardware
            try await alice.store.save([record])
        case .localDatabase:
            var record = try await alice.store.localDatabase.record(for: milkID)
            record["list"] = toHardware
            try await alice.store.localDatabase.save(record)
        }
        #expect(try await alice.store.record(withID: milkID)?.parentID == hardware)

        try await alice.sync()
        try await bob.sync()
        #expect(try await server.privateDatabase("_alice").record(for: milkID).parentID == hardware)
        #expect(try await names(in: bob, zone: bobsView).isEmpty)
        let bobsMilk = CloudRecord.ID(recordName: "milk", zoneID: bobsView)
        let results = try await server.sharedDatabase("_bob").records(for: [bobsMilk], desiredKeys: nil)
        let result = try #require(results[bobsMilk])
        #expect(throws: CloudDatabaseError.unknownItem(bobsMilk)) { try result.get() }
        // The list stays shared: what is still in it, bob still sees.
        #expect(try await bob.store.fetch(ShoppingList.self, id: "groceries", in: bobsView)?.name == "Groceries")
    }

    /// Alice moves the milk out of the shared list while bob renames it: the conflict keeps alice's move (the
    /// record's parent with the field), whichever side the policy takes for the name.
    func aMoveOutOfTheSharedListSurvivesAConflict() async throws {
        try await aliceSharesHerList()
        try await alice.store.save(ShoppingList(id: "hardware", name: "Hardware"))
        let hardware = CloudRecord.ID(recordName: "hardware", zoneID: alicesZone)
        var bobsMilk = try #require(try await bob.store.fetch(Item.self, id: "milk", in: bobsView))
        bobsMilk.note = "the big carton"
        try await bob.store.save(bobsMilk, in: bobsView)
        try await bob.sync()
        // Alice's device hasn't seen bob's note: her move conflicts with it.
        try await alice.store.update(Item.self, id: "milk") { $0.list = CloudLazyReference(recordID: hardware) }
        try await alice.sync()
        try await bob.sync()
        let milkID = CloudRecord.ID(recordName: "milk", zoneID: alicesZone)
        let onServer = try await server.privateDatabase("_alice").record(for: milkID)
        #expect(onServer.parentID == hardware)
        #expect(onServer["list"] == .reference(CloudReference(recordID: hardware, action: .none)))
        #expect(try await names(in: bob, zone: bobsView).isEmpty)
    }

    // MARK: Sharing from the engine

    func aliceSharesChangesAndStopsSharingFromHerEngine() async throws {
        try await alice.store.save(ShoppingList(id: "groceries", name: "Groceries"))
        try await alice.store.save(item("milk", in: alicesZone))
        try await alice.sync()
        let share = try await alice.engine.share(CloudRecord.ID(recordName: "groceries", zoneID: alicesZone)) {
            $0.title = "Groceries"
            try $0.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        }
        #expect(share.owner?.userRecordName == "_alice")
        // The store has the share and the root's link to it, without a sync.
        #expect(try await alice.store.records(ofType: CloudShare.recordType).map(\.id) == [share.id])
        let root = try #require(
            try await alice.store.records(ofType: "ShoppingList").first { $0.id.recordName == "groceries" })
        #expect(root.systemFields?.shareID == share.id)

        _ = try await server.sharedDatabase("_bob").acceptShare(shortGUID: try #require(share.shortGUID))
        try await bob.sync()
        #expect(try await names(in: bob, zone: bobsView) == ["milk"])

        try await alice.engine.updateShare(share.id) {
            try $0.addParticipant(.init(userRecordName: "_bob", permission: .readOnly))
        }
        try await bob.sync()
        await #expect(throws: SyncError.self) {
            try await bob.store.save(item("eggs", in: bobsView), in: bobsView)
        }

        try await alice.engine.stopSharing(share.id)
        #expect(try await alice.store.records(ofType: CloudShare.recordType).isEmpty)
        try await bob.sync()
        #expect(bob.recorder.events.contains(.sharedZoneRemoved(bobsView, discardedChanges: 0)))
        try await alice.sync()
        #expect(try await names(in: alice, zone: alicesZone) == ["milk"])
    }

    func bobLeavesTheShareFromHisEngine() async throws {
        let share = try await aliceSharesHerList()
        try await bob.engine.leaveShare(CloudRecord.ID(recordName: share.id.recordName, zoneID: bobsView))
        try await bob.sync()
        #expect(bob.recorder.events.contains(.sharedZoneRemoved(bobsView, discardedChanges: 0)))
        let alicesCopy = try CloudShare(record: try await server.privateDatabase("_alice").record(for: share.id))
        #expect(alicesCopy.participants.first { $0.userRecordName == "_bob" }?.acceptanceStatus == .removed)
    }

    func sharingARootTheServerDoesntHaveYetSaysToSyncFirst() async throws {
        try await alice.store.save(ShoppingList(id: "groceries", name: "Groceries"))
        _ = try await alice.engine.status()
        _ = try await server.privateDatabase("_alice").modifyRecordZones(saving: [alicesZone], deleting: [])
        await #expect(
            throws: CloudDatabaseError.unknownItem(CloudRecord.ID(recordName: "groceries", zoneID: alicesZone))
        ) {
            try await alice.engine.share(CloudRecord.ID(recordName: "groceries", zoneID: alicesZone))
        }
    }

    // MARK: Each scenario on each server

    @Test(arguments: SharingServerBackend.all)
    func bobSeesTheSharedListInHisStoreUnderAlicesName(backend: SharingServerBackend) async throws {
        try await Self(backend).bobSeesTheSharedListInHisStoreUnderAlicesName()
    }

    @Test(arguments: SharingServerBackend.all)
    func bothEditOfflineAndConverge(backend: SharingServerBackend) async throws {
        try await Self(backend).bothEditOfflineAndConverge()
    }

    @Test(arguments: SharingServerBackend.all)
    func theOwnersAndTheParticipantsEditsOfOneRecordMergeByThePolicy(backend: SharingServerBackend) async throws {
        try await Self(backend).theOwnersAndTheParticipantsEditsOfOneRecordMergeByThePolicy()
    }

    @Test(arguments: SharingServerBackend.all)
    func bobAddsAFolderWithItsNotesInOneSaveUnderTheSharedList(backend: SharingServerBackend) async throws {
        try await Self(backend).bobAddsAFolderWithItsNotesInOneSaveUnderTheSharedList()
    }

    @Test(arguments: SharingServerBackend.all)
    func aliceAddsAnItemAndBobSeesIt(backend: SharingServerBackend) async throws {
        try await Self(backend).aliceAddsAnItemAndBobSeesIt()
    }

    @Test(arguments: SharingServerBackend.all)
    func aReadOnlyParticipantsWriteIsRefusedAndQueuesNothing(backend: SharingServerBackend) async throws {
        try await Self(backend).aReadOnlyParticipantsWriteIsRefusedAndQueuesNothing()
    }

    @Test(arguments: SharingServerBackend.all)
    func aNewRecordOutsideTheSharedListIsRefusedBeforeItIsQueued(backend: SharingServerBackend) async throws {
        try await Self(backend).aNewRecordOutsideTheSharedListIsRefusedBeforeItIsQueued()
    }

    @Test(arguments: SharingServerBackend.all)
    func aliceRemovesBobAndHisCopyGoesWithAnEvent(backend: SharingServerBackend) async throws {
        try await Self(backend).aliceRemovesBobAndHisCopyGoesWithAnEvent()
    }

    @Test(arguments: SharingServerBackend.all)
    func bobsQueuedChangesToAShareMadeReadOnlyAreRevertedWithEvents(backend: SharingServerBackend) async throws {
        try await Self(backend).bobsQueuedChangesToAShareMadeReadOnlyAreRevertedWithEvents()
    }

    @Test(arguments: SharingServerBackend.all, WritePath.allCases)
    func aliceMovesAnItemOutOfTheSharedList(backend: SharingServerBackend, path: WritePath) async throws {
        try await Self(backend).aliceMovesAnItemOutOfTheSharedList(by: path)
    }

    @Test(arguments: SharingServerBackend.all, [ConflictPolicy.fieldByField, .clientWins])
    func aMoveOutOfTheSharedListSurvivesAConflict(backend: SharingServerBackend, policy: ConflictPolicy)
        async throws
    {
        try await Self(backend, alicesPolicy: policy).aMoveOutOfTheSharedListSurvivesAConflict()
    }

    @Test(arguments: SharingServerBackend.all)
    func aliceSharesChangesAndStopsSharingFromHerEngine(backend: SharingServerBackend) async throws {
        try await Self(backend).aliceSharesChangesAndStopsSharingFromHerEngine()
    }

    @Test(arguments: SharingServerBackend.all)
    func bobLeavesTheShareFromHisEngine(backend: SharingServerBackend) async throws {
        try await Self(backend).bobLeavesTheShareFromHisEngine()
    }

    @Test(arguments: SharingServerBackend.all)
    func sharingARootTheServerDoesntHaveYetSaysToSyncFirst(backend: SharingServerBackend) async throws {
        try await Self(backend).sharingARootTheServerDoesntHaveYetSaysToSyncFirst()
    }
}
