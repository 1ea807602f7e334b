import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

/// The shared database on every server with several users (the simulated one in memory, the directory of SQLite
/// files): alice shares her list, bob and carol see and change it through their shared databases, each device at
/// once.
@Suite("Sharing conformance: the shared database")
struct SharedDatabaseConformanceTests {
    /// The zone as alice stores it, and as bob sees it.
    static let lists = CloudRecord.ZoneID(zoneName: "Lists")
    static let alicesLists = CloudRecord.ZoneID(zoneName: "Lists", ownerName: "_alice")

    /// Alice's private database and bob's shared one on a new server.
    struct Users {
        let server: SharingServerUsers
        let alice: any ShareAcceptingDatabase
        let bob: any ShareAcceptingDatabase

        init(_ backend: SharingServerBackend) throws {
            server = try backend.make(SystemCloudClock())
            alice = try server.privateDatabase("_alice")
            bob = try server.sharedDatabase("_bob")
        }
    }

    static func record(_ name: String, type: String = "Item", parent: String? = "groceries") -> CloudRecord {
        var record = CloudRecord(
            recordType: type, id: CloudRecord.ID(recordName: name, zoneID: lists), fields: ["name": .string(name)])
        record.parentID = parent.map { CloudRecord.ID(recordName: $0, zoneID: lists) }
        return record
    }

    /// The ID bob uses for one of alice's records.
    static func bobsID(_ name: String) -> CloudRecord.ID {
        CloudRecord.ID(recordName: name, zoneID: alicesLists)
    }

    /// Alice's list with one item, shared with bob (or, with a public permission, with anyone who has the URL, bob
    /// too: CloudKit doesn't mix invited and public users); he has accepted unless `accepts` is false.
    @discardableResult
    func aliceSharesHerList(
        _ users: Users, with permission: CloudShare.Permission = .readWrite,
        publicPermission: CloudShare.Permission = .none,
        accepts: Bool = true
    ) async throws -> CloudShare {
        _ = try await users.alice.modifyRecordZones(saving: [Self.lists], deleting: [])
        let list = Self.record("groceries", type: "List", parent: nil)
        var share = try CloudShare(rootRecord: list)
        share.publicPermission = publicPermission
        if publicPermission == .none { try share.addParticipant(.init(userRecordName: "_bob", permission: permission)) }
        let results = try await users.alice.modifyRecords(
            saving: [list, Self.record("milk"), share.record], deleting: [], savePolicy: .ifServerRecordUnchanged,
            atomically: true)
        let saved = try CloudShare(record: try #require(results.saveResults[share.id]).get())
        if accepts { _ = try await users.bob.acceptShare(shortGUID: try #require(saved.shortGUID)) }
        return saved
    }

    @Test(arguments: SharingServerBackend.all) func bobSeesTheListItsItemsAndTheShareInAlicesZone(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        let share = try await aliceSharesHerList(users)

        #expect(try await users.bob.allRecordZones() == [Self.alicesLists])
        let changes = try await users.bob.databaseChanges(since: nil)
        #expect(changes.modifiedZoneIDs == [Self.alicesLists])
        let zone = try await users.bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: nil)
        #expect(
            Set(zone.modifications.map(\.id)) == [
                Self.bobsID("groceries"), Self.bobsID("milk"), Self.bobsID(share.id.recordName),
            ])
        let milk = try await users.bob.record(for: Self.bobsID("milk"))
        #expect(milk.parentID == Self.bobsID("groceries"))
        #expect(milk.fields["name"] == .string("milk"))
        let list = try await users.bob.record(for: Self.bobsID("groceries"))
        #expect(list.systemFields?.shareID == Self.bobsID(share.id.recordName))
        // Alice's own database is untouched: her names, her zone.
        #expect(
            try await users.alice.record(for: CloudRecord.ID(recordName: "milk", zoneID: Self.lists)).id.zoneID
                == Self.lists)
    }

    @Test(arguments: SharingServerBackend.all) func aRecordOutsideTheSharedHierarchyStaysPrivate(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        try await aliceSharesHerList(users)
        _ = try await users.alice.save(Self.record("diary", type: "Note", parent: nil))
        await #expect(throws: CloudDatabaseError.unknownItem(Self.bobsID("diary"))) {
            _ = try await users.bob.record(for: Self.bobsID("diary"))
        }
    }

    @Test(arguments: SharingServerBackend.all) func aPendingInvitationShowsNothing(backend: SharingServerBackend)
        async throws
    {
        let users = try Users(backend)
        try await aliceSharesHerList(users, accepts: false)
        #expect(try await users.bob.allRecordZones() == [])
        #expect(try await users.bob.databaseChanges(since: nil).modifiedZoneIDs == [])
        await #expect(throws: CloudDatabaseError.zoneNotFound(Self.alicesLists)) {
            _ = try await users.bob.record(for: Self.bobsID("milk"))
        }
    }

    @Test(arguments: SharingServerBackend.all) func aliceAddsAnItemAndBobsZoneChangesCarryIt(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        try await aliceSharesHerList(users)
        let before = try await users.bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: nil).changeToken
        _ = try await users.alice.save(Self.record("eggs"))
        let changes = try await users.bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: before)
        #expect(changes.modifications.map(\.id) == [Self.bobsID("eggs")])
        #expect(changes.deletions == [])
    }

    @Test(arguments: SharingServerBackend.all) func bobEditsAndAddsItemsThatAliceSeesAsHis(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        try await aliceSharesHerList(users)
        var milk = try await users.bob.record(for: Self.bobsID("milk"))
        milk.fields["name"] = .string("oat milk")
        _ = try await users.bob.save(milk)
        var eggs = Self.record("eggs")
        eggs.id = Self.bobsID("eggs")
        eggs.parentID = Self.bobsID("groceries")
        let saved = try await users.bob.save(eggs)
        #expect(saved.id == Self.bobsID("eggs"))

        let alicesMilk = try await users.alice.record(for: CloudRecord.ID(recordName: "milk", zoneID: Self.lists))
        #expect(alicesMilk.fields["name"] == .string("oat milk"))
        #expect(alicesMilk.systemFields?.lastModifiedUserRecordName == "_bob")
        let alicesEggs = try await users.alice.record(for: CloudRecord.ID(recordName: "eggs", zoneID: Self.lists))
        #expect(alicesEggs.parentID == CloudRecord.ID(recordName: "groceries", zoneID: Self.lists))
        #expect(alicesEggs.systemFields?.creatorUserRecordName == "_bob")
    }

    @Test(arguments: SharingServerBackend.all) func aNewChildOfANewParentInTheSameRequestIsCoveredThroughIt(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        try await aliceSharesHerList(users)
        var section = Self.record("dairy", type: "Section")
        section.id = Self.bobsID("dairy")
        section.parentID = Self.bobsID("groceries")
        var cheese = Self.record("cheese")
        cheese.id = Self.bobsID("cheese")
        cheese.parentID = section.id
        // The child first: its parent is new too, in the same request.
        let results = try await users.bob.modifyRecords(
            saving: [cheese, section], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        _ = try #require(results.saveResults[cheese.id]).get()
        _ = try #require(results.saveResults[section.id]).get()
        let alicesCheese = try await users.alice.record(for: CloudRecord.ID(recordName: "cheese", zoneID: Self.lists))
        #expect(alicesCheese.parentID == CloudRecord.ID(recordName: "dairy", zoneID: Self.lists))
    }

    @Test(arguments: SharingServerBackend.all) func aRefusedParentCoversNoNewChild(backend: SharingServerBackend)
        async throws
    {
        let users = try Users(backend)
        try await aliceSharesHerList(users)
        _ = try await users.alice.save(Self.record("diary", type: "Note", parent: nil))
        // Bob tries to pull alice's private diary under the shared list, and to hang a new page under it.
        var diary = Self.record("diary", type: "Note", parent: "groceries")
        diary.id = Self.bobsID("diary")
        diary.parentID = Self.bobsID("groceries")
        var page = Self.record("page", type: "Page")
        page.id = Self.bobsID("page")
        page.parentID = diary.id
        let results = try await users.bob.modifyRecords(
            saving: [diary, page], deleting: [], savePolicy: .changedKeys, atomically: false)
        #expect(throws: CloudDatabaseError.self) { try results.saveResults[diary.id]?.get() }
        #expect(throws: CloudDatabaseError.self) { try results.saveResults[page.id]?.get() }
        await #expect(throws: CloudDatabaseError.unknownItem(CloudRecord.ID(recordName: "page", zoneID: Self.lists))) {
            _ = try await users.alice.record(for: CloudRecord.ID(recordName: "page", zoneID: Self.lists))
        }
    }

    @Test(arguments: SharingServerBackend.all) func aParticipantCantMoveTheSharedRootUnderAnUnsharedRecord(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        try await aliceSharesHerList(users)
        _ = try await users.alice.save(Self.record("diary", type: "Note", parent: nil))
        var root = try await users.bob.record(for: Self.bobsID("groceries"))
        root.parentID = Self.bobsID("diary")
        await #expect {
            _ = try await users.bob.save(root)
        } throws: { error in
            guard (error as? CloudDatabaseError)?.code == .permissionFailure else { return false }
            return true
        }
        #expect(
            try await users.alice.record(for: CloudRecord.ID(recordName: "groceries", zoneID: Self.lists)).parentID
                == nil)
    }

    @Test(arguments: SharingServerBackend.all) func deletingAShareBobDidntJoinIsRefusedAndChangesNothing(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        _ = try await users.alice.modifyRecordZones(saving: [Self.lists], deleting: [])
        var zoneShare = try CloudShare(zoneID: Self.lists)
        try zoneShare.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        let list = Self.record("groceries", type: "List", parent: nil)
        var carols = try CloudShare(rootRecord: list)
        try carols.addParticipant(.init(userRecordName: "_carol", permission: .readOnly))
        let results = try await users.alice.modifyRecords(
            saving: [list, zoneShare.record, carols.record], deleting: [], savePolicy: .ifServerRecordUnchanged,
            atomically: true)
        let saved = try CloudShare(record: try #require(results.saveResults[zoneShare.id]).get())
        _ = try await users.bob.acceptShare(shortGUID: try #require(saved.shortGUID))
        let before = try await users.alice.record(for: carols.id)

        // Bob sees carol's share through the zone-wide one, but it isn't his to leave.
        await #expect(throws: CloudDatabaseError.self) {
            try await users.bob.deleteRecord(withID: Self.bobsID(carols.id.recordName))
        }
        #expect(try await users.alice.record(for: carols.id) == before)
    }

    @Test(arguments: SharingServerBackend.all) func aParticipantWhoLeftStandsAsAStrangerAgain(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        let share = try await aliceSharesHerList(users)
        try await users.bob.deleteRecord(withID: Self.bobsID(share.id.recordName))
        await #expect {
            _ = try await users.bob.shareMetadata(shortGUID: try #require(share.shortGUID), fetchingRootRecord: true)
        } throws: { error in
            guard case .permissionFailure(let reason)? = (error as? CloudDatabaseError)?.kind else { return false }
            return !reason.contains("Lists")
        }
    }

    @Test(arguments: SharingServerBackend.all) func aNewRecordOutsideTheShareIsRefused(backend: SharingServerBackend)
        async throws
    {
        let users = try Users(backend)
        try await aliceSharesHerList(users)
        var orphan = Self.record("orphan", parent: nil)
        orphan.id = Self.bobsID("orphan")
        await #expect {
            _ = try await users.bob.save(orphan)
        } throws: { error in
            guard case .permissionFailure(let reason)? = (error as? CloudDatabaseError)?.kind else { return false }
            return reason.contains("set its parent to a shared record")
        }
    }

    @Test(arguments: SharingServerBackend.all) func aReadOnlyParticipantsWriteIsRefusedAndChangesNothing(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        try await aliceSharesHerList(users, with: .readOnly)
        var milk = try await users.bob.record(for: Self.bobsID("milk"))
        milk.fields["name"] = .string("spilt milk")
        await #expect {
            _ = try await users.bob.save(milk)
        } throws: { error in
            guard case .permissionFailure(let reason)? = (error as? CloudDatabaseError)?.kind else { return false }
            return reason.contains("_bob has read-only access to milk")
        }
        await #expect(throws: CloudDatabaseError.self) { try await users.bob.deleteRecord(withID: Self.bobsID("milk")) }
        let alicesMilk = try await users.alice.record(for: CloudRecord.ID(recordName: "milk", zoneID: Self.lists))
        #expect(alicesMilk.fields["name"] == .string("milk"))
    }

    @Test(arguments: SharingServerBackend.all) func aConflictNamesTheRecordsAsBobDoes(backend: SharingServerBackend)
        async throws
    {
        let users = try Users(backend)
        try await aliceSharesHerList(users)
        var stale = try await users.bob.record(for: Self.bobsID("milk"))
        var alicesMilk = try await users.alice.record(for: CloudRecord.ID(recordName: "milk", zoneID: Self.lists))
        alicesMilk.fields["name"] = .string("whole milk")
        _ = try await users.alice.save(alicesMilk)
        stale.fields["name"] = .string("skimmed milk")
        await #expect {
            _ = try await users.bob.save(stale)
        } throws: { error in
            guard case .serverRecordChanged(let server, let client, _)? = (error as? CloudDatabaseError)?.kind else {
                return false
            }
            return server.id == Self.bobsID("milk") && server.fields["name"] == .string("whole milk")
                && client.id == Self.bobsID("milk")
        }
    }

    @Test(arguments: SharingServerBackend.all) func removingBobDeletesTheZoneFromHisSharedDatabase(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        let share = try await aliceSharesHerList(users)
        let token = try await users.bob.databaseChanges(since: nil).changeToken
        let zoneToken = try await users.bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: nil).changeToken

        var current = try CloudShare(record: try await users.alice.record(for: share.id))
        let bobAsParticipant = try #require(current.participants.first { $0.userRecordName == "_bob" })
        let removed = current.removeParticipant(bobAsParticipant)
        #expect(removed)
        _ = try await users.alice.save(current.record)

        let changes = try await users.bob.databaseChanges(since: token)
        #expect(changes.deletions == [CloudZoneDeletion(zoneID: Self.alicesLists, reason: .deleted)])
        #expect(try await users.bob.allRecordZones() == [])
        await #expect(throws: CloudDatabaseError.zoneNotFound(Self.alicesLists)) {
            _ = try await users.bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: zoneToken)
        }
        // Alice keeps everything.
        #expect(
            try await users.alice.record(for: CloudRecord.ID(recordName: "milk", zoneID: Self.lists)).fields["name"]
                != nil)
    }

    @Test(arguments: SharingServerBackend.all) func anItemMovedOutOfTheListIsADeletionForBob(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        try await aliceSharesHerList(users)
        _ = try await users.alice.save(Self.record("eggs"))
        let token = try await users.bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: nil).changeToken
        var eggs = try await users.alice.record(for: CloudRecord.ID(recordName: "eggs", zoneID: Self.lists))
        eggs.parentID = nil
        _ = try await users.alice.save(eggs)

        let changes = try await users.bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: token)
        #expect(changes.modifications == [])
        #expect(changes.deletions == [CloudRecordDeletion(id: Self.bobsID("eggs"), recordType: "Item")])
    }

    @Test(arguments: SharingServerBackend.all) func bobLeavesByDeletingTheShare(backend: SharingServerBackend)
        async throws
    {
        let users = try Users(backend)
        let share = try await aliceSharesHerList(users)
        try await users.bob.deleteRecord(withID: Self.bobsID(share.id.recordName))

        #expect(try await users.bob.allRecordZones() == [])
        let stored = try CloudShare(record: try await users.alice.record(for: share.id))
        #expect(stored.participants.first { $0.userRecordName == "_bob" }?.acceptanceStatus == .removed)
        // The list stays alice's and shared.
        #expect(try await users.alice.record(for: share.id).recordType == CloudShare.recordType)
    }

    @Test(arguments: SharingServerBackend.all) func bobLeavesByDeletingTheZone(backend: SharingServerBackend)
        async throws
    {
        let users = try Users(backend)
        try await aliceSharesHerList(users)
        let results = try await users.bob.modifyRecordZones(saving: [], deleting: [Self.alicesLists])
        _ = try #require(results.deleteResults[Self.alicesLists]).get()
        #expect(try await users.bob.allRecordZones() == [])
        #expect(try await users.alice.allRecordZones().contains(Self.lists))
    }

    @Test(arguments: SharingServerBackend.all) func theSharedDatabaseCreatesNoZoneAndTakesNoZoneSubscription(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        try await aliceSharesHerList(users)
        let zones = try await users.bob.modifyRecordZones(
            saving: [CloudRecord.ZoneID(zoneName: "Mine", ownerName: "_bob")], deleting: [])
        let zoneSave = try #require(zones.saveResults.values.first)
        #expect(throws: CloudDatabaseError.self) { try zoneSave.get() }
        let subscriptions = try await users.bob.modifySubscriptions(
            saving: [
                CloudSubscription(id: "zone", kind: .zone(Self.alicesLists)),
                CloudSubscription(id: "database", kind: .database),
            ], deleting: [])
        #expect(throws: CloudDatabaseError.self) { try subscriptions.saveResults["zone"]?.get() }
        _ = try #require(subscriptions.saveResults["database"]).get()
    }

    @Test(arguments: SharingServerBackend.all) func bobCantChangeTheShare(backend: SharingServerBackend) async throws {
        let users = try Users(backend)
        let share = try await aliceSharesHerList(users)
        var bobsCopy = try CloudShare(record: try await users.bob.record(for: Self.bobsID(share.id.recordName)))
        try bobsCopy.addParticipant(.init(userRecordName: "_mallory", permission: .readWrite))
        await #expect {
            _ = try await users.bob.save(bobsCopy.record)
        } throws: { error in
            guard case .permissionFailure(let reason)? = (error as? CloudDatabaseError)?.kind else { return false }
            return reason.contains("only its owner changes a share's participants")
        }
    }

    @Test(arguments: SharingServerBackend.all) func aZoneWideShareShowsEveryRecordOfTheZone(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        _ = try await users.alice.modifyRecordZones(saving: [Self.lists], deleting: [])
        var share = try CloudShare(zoneID: Self.lists)
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readOnly))
        let results = try await users.alice.modifyRecords(
            saving: [
                Self.record("groceries", type: "List", parent: nil), Self.record("diary", parent: nil), share.record,
            ],
            deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        let saved = try CloudShare(record: try #require(results.saveResults[share.id]).get())
        _ = try await users.bob.acceptShare(shortGUID: try #require(saved.shortGUID))

        let zone = try await users.bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: nil)
        #expect(
            Set(zone.modifications.map(\.id.recordName)) == ["groceries", "diary", CloudShare.zoneWideRecordName])
    }

    @Test(arguments: SharingServerBackend.all) func carolJoinsFromThePublicURLAndSeesTheListToo(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        let share = try await aliceSharesHerList(users, publicPermission: .readOnly)
        let carol = try users.server.sharedDatabase("_carol")
        let accepted = try await carol.acceptShare(shortGUID: try #require(share.shortGUID))
        #expect(accepted.participants.first { $0.userRecordName == "_carol" }?.role == .publicUser)
        #expect(try await carol.record(for: Self.bobsID("milk")).fields["name"] == .string("milk"))
    }

    @Test(arguments: SharingServerBackend.all) func aShareBothPublicAndWithInvitedParticipantsIsRefused(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        _ = try await users.alice.modifyRecordZones(saving: [Self.lists], deleting: [])
        let list = Self.record("groceries", type: "List", parent: nil)
        var share = try CloudShare(rootRecord: list)
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        share.publicPermission = .readOnly
        let results = try await users.alice.modifyRecords(
            saving: [list, share.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: false)
        let refusal = try #require(results.saveResults[share.id])
        #expect(
            throws: CloudDatabaseError.invalidArguments(
                CloudShareError.publicShareWithInvitedParticipants(share.id).description)
        ) { try refusal.get() }
        // Made public without its invited participants, it saves.
        share.removeParticipant(userRecordName: "_bob")
        let savedList = try #require(results.saveResults[list.id]).get()
        let again = try await users.alice.modifyRecords(
            saving: [savedList, share.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: false)
        let saved = try #require(again.saveResults[share.id]).get()
        #expect(try CloudShare(record: saved).publicPermission == .readOnly)
    }

    @Test(arguments: SharingServerBackend.all) func theMetadataTellsBobWhatHeIsInvitedToBeforeHeAccepts(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        let share = try await aliceSharesHerList(users, accepts: false)
        let metadata = try await users.bob.shareMetadata(
            shortGUID: try #require(share.shortGUID), fetchingRootRecord: true)
        #expect(metadata.ownerUserRecordName == "_alice")
        #expect(metadata.rootRecordID == Self.bobsID("groceries"))
        #expect(metadata.rootRecord?.fields["name"] == .string("groceries"))
        #expect(metadata.share.id == Self.bobsID(share.id.recordName))
        #expect(metadata.participantRole == .privateUser)
        #expect(metadata.participantStatus == .pending)
        #expect(metadata.participantPermission == .readWrite)
        // Resolving accepts nothing.
        #expect(try await users.bob.allRecordZones() == [])
    }

    @Test(arguments: SharingServerBackend.all) func theMetadataOfAPublicShareOffersAStrangerItsPublicPermission(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        let share = try await aliceSharesHerList(users, publicPermission: .readOnly)
        let metadata = try await users.server.sharedDatabase("_carol").shareMetadata(
            shortGUID: try #require(share.shortGUID))
        #expect(metadata.rootRecord == nil)
        #expect(metadata.participantRole == .publicUser)
        #expect(metadata.participantStatus == .unknown)
        #expect(metadata.participantPermission == .readOnly)
    }

    @Test(arguments: SharingServerBackend.all) func aPrivateSharesMetadataIsRefusedToAStranger(
        backend: SharingServerBackend
    ) async throws {
        let users = try Users(backend)
        let privateShare = try await aliceSharesHerList(users)
        await #expect {
            _ = try await users.server.sharedDatabase("_carol").shareMetadata(
                shortGUID: try #require(privateShare.shortGUID))
        } throws: { error in
            guard case .permissionFailure(let reason)? = (error as? CloudDatabaseError)?.kind else { return false }
            return reason.contains("ask its owner to invite them")
        }
    }
}
