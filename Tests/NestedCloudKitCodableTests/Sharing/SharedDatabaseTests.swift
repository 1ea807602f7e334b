import Foundation
import NestedCloudKitCodable
import Testing

/// The shared database on the simulated server: alice shares her list, bob and carol see and change it through
/// their shared databases, each device at once (``InMemoryCloudDatabase/ScopedDatabase``).
@Suite("Sharing: the shared database")
struct SharedDatabaseTests {
    /// The zone as alice stores it, and as bob sees it.
    static let lists = CloudRecord.ZoneID(zoneName: "Lists")
    static let alicesLists = CloudRecord.ZoneID(zoneName: "Lists", ownerName: "_alice")

    let server = InMemoryCloudDatabase(userRecordName: "_alice")
    var alice: InMemoryCloudDatabase.ScopedDatabase { server.privateDatabase(of: "_alice") }
    var bob: InMemoryCloudDatabase.ScopedDatabase { server.sharedDatabase(of: "_bob") }

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

    /// Alice's list with one item, shared with bob; he has accepted unless `accepts` is false.
    @discardableResult
    func aliceSharesHerList(
        with permission: CloudShare.Permission = .readWrite, publicPermission: CloudShare.Permission = .none,
        accepts: Bool = true
    ) async throws -> CloudShare {
        _ = try await alice.modifyRecordZones(saving: [Self.lists], deleting: [])
        let list = Self.record("groceries", type: "List", parent: nil)
        var share = try CloudShare(rootRecord: list)
        share.publicPermission = publicPermission
        try share.addParticipant(.init(userRecordName: "_bob", permission: permission))
        let results = try await alice.modifyRecords(
            saving: [list, Self.record("milk"), share.record], deleting: [], savePolicy: .ifServerRecordUnchanged,
            atomically: true)
        let saved = try CloudShare(record: try #require(results.saveResults[share.id]).get())
        if accepts { _ = try await bob.acceptShare(shortGUID: try #require(saved.shortGUID)) }
        return saved
    }

    @Test func bobSeesTheListItsItemsAndTheShareInAlicesZone() async throws {
        let share = try await aliceSharesHerList()

        #expect(try await bob.allRecordZones() == [Self.alicesLists])
        let changes = try await bob.databaseChanges(since: nil)
        #expect(changes.modifiedZoneIDs == [Self.alicesLists])
        let zone = try await bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: nil)
        #expect(
            Set(zone.modifications.map(\.id)) == [
                Self.bobsID("groceries"), Self.bobsID("milk"), Self.bobsID(share.id.recordName),
            ])
        let milk = try await bob.record(for: Self.bobsID("milk"))
        #expect(milk.parentID == Self.bobsID("groceries"))
        #expect(milk.fields["name"] == .string("milk"))
        let list = try await bob.record(for: Self.bobsID("groceries"))
        #expect(list.systemFields?.shareID == Self.bobsID(share.id.recordName))
        // Alice's own database is untouched: her names, her zone.
        #expect(
            try await alice.record(for: CloudRecord.ID(recordName: "milk", zoneID: Self.lists)).id.zoneID == Self.lists)
    }

    @Test func aRecordOutsideTheSharedHierarchyStaysPrivate() async throws {
        try await aliceSharesHerList()
        try await alice.save(Self.record("diary", type: "Note", parent: nil))
        await #expect(throws: CloudDatabaseError.unknownItem(Self.bobsID("diary"))) {
            _ = try await bob.record(for: Self.bobsID("diary"))
        }
    }

    @Test func aPendingInvitationShowsNothing() async throws {
        try await aliceSharesHerList(accepts: false)
        #expect(try await bob.allRecordZones() == [])
        #expect(try await bob.databaseChanges(since: nil).modifiedZoneIDs == [])
        await #expect(throws: CloudDatabaseError.zoneNotFound(Self.alicesLists)) {
            _ = try await bob.record(for: Self.bobsID("milk"))
        }
    }

    @Test func aliceAddsAnItemAndBobsZoneChangesCarryIt() async throws {
        try await aliceSharesHerList()
        let before = try await bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: nil).changeToken
        try await alice.save(Self.record("eggs"))
        let changes = try await bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: before)
        #expect(changes.modifications.map(\.id) == [Self.bobsID("eggs")])
        #expect(changes.deletions == [])
    }

    @Test func bobEditsAndAddsItemsThatAliceSeesAsHis() async throws {
        try await aliceSharesHerList()
        var milk = try await bob.record(for: Self.bobsID("milk"))
        milk.fields["name"] = .string("oat milk")
        try await bob.save(milk)
        var eggs = Self.record("eggs")
        eggs.id = Self.bobsID("eggs")
        eggs.parentID = Self.bobsID("groceries")
        let saved = try await bob.save(eggs)
        #expect(saved.id == Self.bobsID("eggs"))

        let alicesMilk = try await alice.record(for: CloudRecord.ID(recordName: "milk", zoneID: Self.lists))
        #expect(alicesMilk.fields["name"] == .string("oat milk"))
        #expect(alicesMilk.systemFields?.lastModifiedUserRecordName == "_bob")
        let alicesEggs = try await alice.record(for: CloudRecord.ID(recordName: "eggs", zoneID: Self.lists))
        #expect(alicesEggs.parentID == CloudRecord.ID(recordName: "groceries", zoneID: Self.lists))
        #expect(alicesEggs.systemFields?.creatorUserRecordName == "_bob")
    }

    @Test func aNewChildOfANewParentInTheSameRequestIsCoveredThroughIt() async throws {
        try await aliceSharesHerList()
        var section = Self.record("dairy", type: "Section")
        section.id = Self.bobsID("dairy")
        section.parentID = Self.bobsID("groceries")
        var cheese = Self.record("cheese")
        cheese.id = Self.bobsID("cheese")
        cheese.parentID = section.id
        // The child first: its parent is new too, in the same request.
        let results = try await bob.modifyRecords(
            saving: [cheese, section], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        #expect(throws: Never.self) { try results.saveResults[cheese.id]?.get() }
        #expect(throws: Never.self) { try results.saveResults[section.id]?.get() }
        let alicesCheese = try await alice.record(for: CloudRecord.ID(recordName: "cheese", zoneID: Self.lists))
        #expect(alicesCheese.parentID == CloudRecord.ID(recordName: "dairy", zoneID: Self.lists))
    }

    @Test func aRefusedParentCoversNoNewChild() async throws {
        try await aliceSharesHerList()
        try await alice.save(Self.record("diary", type: "Note", parent: nil))
        // Bob tries to pull alice's private diary under the shared list, and to hang a new page under it.
        var diary = Self.record("diary", type: "Note", parent: "groceries")
        diary.id = Self.bobsID("diary")
        diary.parentID = Self.bobsID("groceries")
        var page = Self.record("page", type: "Page")
        page.id = Self.bobsID("page")
        page.parentID = diary.id
        let results = try await bob.modifyRecords(
            saving: [diary, page], deleting: [], savePolicy: .changedKeys, atomically: false)
        #expect(throws: CloudDatabaseError.self) { try results.saveResults[diary.id]?.get() }
        #expect(throws: CloudDatabaseError.self) { try results.saveResults[page.id]?.get() }
        await #expect(throws: CloudDatabaseError.unknownItem(CloudRecord.ID(recordName: "page", zoneID: Self.lists))) {
            _ = try await alice.record(for: CloudRecord.ID(recordName: "page", zoneID: Self.lists))
        }
    }

    @Test func aParticipantCantMoveTheSharedRootUnderAnUnsharedRecord() async throws {
        try await aliceSharesHerList()
        try await alice.save(Self.record("diary", type: "Note", parent: nil))
        var root = try await bob.record(for: Self.bobsID("groceries"))
        root.parentID = Self.bobsID("diary")
        await #expect {
            try await bob.save(root)
        } throws: { error in
            guard case CloudDatabaseError.permissionFailure = error else { return false }
            return true
        }
        #expect(
            try await alice.record(for: CloudRecord.ID(recordName: "groceries", zoneID: Self.lists)).parentID == nil)
    }

    @Test func deletingAShareBobDidntJoinIsRefusedAndChangesNothing() async throws {
        _ = try await alice.modifyRecordZones(saving: [Self.lists], deleting: [])
        var zoneShare = try CloudShare(zoneID: Self.lists)
        try zoneShare.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        let list = Self.record("groceries", type: "List", parent: nil)
        var carols = try CloudShare(rootRecord: list)
        try carols.addParticipant(.init(userRecordName: "_carol", permission: .readOnly))
        let results = try await alice.modifyRecords(
            saving: [list, zoneShare.record, carols.record], deleting: [], savePolicy: .ifServerRecordUnchanged,
            atomically: true)
        let saved = try CloudShare(record: try #require(results.saveResults[zoneShare.id]).get())
        _ = try await bob.acceptShare(shortGUID: try #require(saved.shortGUID))
        let before = try await alice.record(for: carols.id)

        // Bob sees carol's share through the zone-wide one, but it isn't his to leave.
        await #expect(throws: CloudDatabaseError.self) {
            try await bob.deleteRecord(withID: Self.bobsID(carols.id.recordName))
        }
        #expect(try await alice.record(for: carols.id) == before)
    }

    @Test func aParticipantWhoLeftStandsAsAStrangerAgain() async throws {
        let share = try await aliceSharesHerList()
        try await bob.deleteRecord(withID: Self.bobsID(share.id.recordName))
        await #expect {
            _ = try await bob.shareMetadata(shortGUID: try #require(share.shortGUID), fetchingRootRecord: true)
        } throws: { error in
            guard case CloudDatabaseError.permissionFailure(let reason) = error else { return false }
            return !reason.contains("Lists")
        }
    }

    @Test func aNewRecordOutsideTheShareIsRefused() async throws {
        try await aliceSharesHerList()
        var orphan = Self.record("orphan", parent: nil)
        orphan.id = Self.bobsID("orphan")
        await #expect {
            try await bob.save(orphan)
        } throws: { error in
            guard case CloudDatabaseError.permissionFailure(let reason) = error else { return false }
            return reason.contains("set its parent to a shared record")
        }
    }

    @Test func aReadOnlyParticipantsWriteIsRefusedAndChangesNothing() async throws {
        try await aliceSharesHerList(with: .readOnly)
        var milk = try await bob.record(for: Self.bobsID("milk"))
        milk.fields["name"] = .string("spilt milk")
        await #expect {
            try await bob.save(milk)
        } throws: { error in
            guard case CloudDatabaseError.permissionFailure(let reason) = error else { return false }
            return reason.contains("_bob has read-only access to milk")
        }
        await #expect(throws: CloudDatabaseError.self) { try await bob.deleteRecord(withID: Self.bobsID("milk")) }
        let alicesMilk = try await alice.record(for: CloudRecord.ID(recordName: "milk", zoneID: Self.lists))
        #expect(alicesMilk.fields["name"] == .string("milk"))
    }

    @Test func aConflictNamesTheRecordsAsBobDoes() async throws {
        try await aliceSharesHerList()
        var stale = try await bob.record(for: Self.bobsID("milk"))
        var alicesMilk = try await alice.record(for: CloudRecord.ID(recordName: "milk", zoneID: Self.lists))
        alicesMilk.fields["name"] = .string("whole milk")
        try await alice.save(alicesMilk)
        stale.fields["name"] = .string("skimmed milk")
        await #expect {
            try await bob.save(stale)
        } throws: { error in
            guard case CloudDatabaseError.serverRecordChanged(let server, let client, _) = error else { return false }
            return server.id == Self.bobsID("milk") && server.fields["name"] == .string("whole milk")
                && client.id == Self.bobsID("milk")
        }
    }

    @Test func removingBobDeletesTheZoneFromHisSharedDatabase() async throws {
        let share = try await aliceSharesHerList()
        let token = try await bob.databaseChanges(since: nil).changeToken
        let zoneToken = try await bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: nil).changeToken

        var current = try CloudShare(record: try await alice.record(for: share.id))
        let bobAsParticipant = try #require(current.participants.first { $0.userRecordName == "_bob" })
        let removed = current.removeParticipant(bobAsParticipant)
        #expect(removed)
        try await alice.save(current.record)

        let changes = try await bob.databaseChanges(since: token)
        #expect(changes.deletions == [CloudZoneDeletion(zoneID: Self.alicesLists, reason: .deleted)])
        #expect(try await bob.allRecordZones() == [])
        await #expect(throws: CloudDatabaseError.zoneNotFound(Self.alicesLists)) {
            _ = try await bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: zoneToken)
        }
        // Alice keeps everything.
        #expect(
            try await alice.record(for: CloudRecord.ID(recordName: "milk", zoneID: Self.lists)).fields["name"] != nil)
    }

    @Test func anItemMovedOutOfTheListIsADeletionForBob() async throws {
        try await aliceSharesHerList()
        try await alice.save(Self.record("eggs"))
        let token = try await bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: nil).changeToken
        var eggs = try await alice.record(for: CloudRecord.ID(recordName: "eggs", zoneID: Self.lists))
        eggs.parentID = nil
        try await alice.save(eggs)

        let changes = try await bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: token)
        #expect(changes.modifications == [])
        #expect(changes.deletions == [CloudRecordDeletion(id: Self.bobsID("eggs"), recordType: "Item")])
    }

    @Test func bobLeavesByDeletingTheShare() async throws {
        let share = try await aliceSharesHerList()
        try await bob.deleteRecord(withID: Self.bobsID(share.id.recordName))

        #expect(try await bob.allRecordZones() == [])
        let stored = try CloudShare(record: try await alice.record(for: share.id))
        #expect(stored.participants.first { $0.userRecordName == "_bob" }?.acceptanceStatus == .removed)
        // The list stays alice's and shared.
        #expect(try await alice.record(for: share.id).recordType == CloudShare.recordType)
    }

    @Test func bobLeavesByDeletingTheZone() async throws {
        try await aliceSharesHerList()
        let results = try await bob.modifyRecordZones(saving: [], deleting: [Self.alicesLists])
        #expect(throws: Never.self) { try results.deleteResults[Self.alicesLists]?.get() }
        #expect(try await bob.allRecordZones() == [])
        #expect(try await alice.allRecordZones().contains(Self.lists))
    }

    @Test func theSharedDatabaseCreatesNoZoneAndTakesNoZoneSubscription() async throws {
        try await aliceSharesHerList()
        let zones = try await bob.modifyRecordZones(
            saving: [CloudRecord.ZoneID(zoneName: "Mine", ownerName: "_bob")], deleting: [])
        let zoneSave = try #require(zones.saveResults.values.first)
        #expect(throws: CloudDatabaseError.self) { try zoneSave.get() }
        let subscriptions = try await bob.modifySubscriptions(
            saving: [
                CloudSubscription(id: "zone", kind: .zone(Self.alicesLists)),
                CloudSubscription(id: "database", kind: .database),
            ], deleting: [])
        #expect(throws: CloudDatabaseError.self) { try subscriptions.saveResults["zone"]?.get() }
        #expect(throws: Never.self) { try subscriptions.saveResults["database"]?.get() }
    }

    @Test func bobCantChangeTheShare() async throws {
        let share = try await aliceSharesHerList()
        var bobsCopy = try CloudShare(record: try await bob.record(for: Self.bobsID(share.id.recordName)))
        try bobsCopy.addParticipant(.init(userRecordName: "_mallory", permission: .readWrite))
        await #expect {
            try await bob.save(bobsCopy.record)
        } throws: { error in
            guard case CloudDatabaseError.permissionFailure(let reason) = error else { return false }
            return reason.contains("only its owner changes a share's participants")
        }
    }

    @Test func aZoneWideShareShowsEveryRecordOfTheZone() async throws {
        _ = try await alice.modifyRecordZones(saving: [Self.lists], deleting: [])
        var share = try CloudShare(zoneID: Self.lists)
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readOnly))
        let results = try await alice.modifyRecords(
            saving: [
                Self.record("groceries", type: "List", parent: nil), Self.record("diary", parent: nil), share.record,
            ],
            deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        let saved = try CloudShare(record: try #require(results.saveResults[share.id]).get())
        _ = try await bob.acceptShare(shortGUID: try #require(saved.shortGUID))

        let zone = try await bob.recordZoneChanges(inZoneWith: Self.alicesLists, since: nil)
        #expect(
            Set(zone.modifications.map(\.id.recordName)) == ["groceries", "diary", CloudShare.zoneWideRecordName])
    }

    @Test func carolJoinsFromThePublicURLAndSeesTheListToo() async throws {
        let share = try await aliceSharesHerList(publicPermission: .readOnly)
        let carol = server.sharedDatabase(of: "_carol")
        let accepted = try await carol.acceptShare(shortGUID: try #require(share.shortGUID))
        #expect(accepted.participants.first { $0.userRecordName == "_carol" }?.role == .publicUser)
        #expect(try await carol.record(for: Self.bobsID("milk")).fields["name"] == .string("milk"))
    }

    @Test func eachUsersPrivateDatabaseIsTheirsWhoeverIsSignedIn() async throws {
        let bobsPrivate = server.privateDatabase(of: "_bob")
        try await bobsPrivate.save(CloudRecord(recordType: "Note", id: CloudRecord.ID(recordName: "bobs")))
        try await alice.save(CloudRecord(recordType: "Note", id: CloudRecord.ID(recordName: "alices")))
        #expect(try await bobsPrivate.userRecordName() == "_bob")
        await #expect(throws: CloudDatabaseError.unknownItem(CloudRecord.ID(recordName: "alices"))) {
            _ = try await bobsPrivate.record(for: CloudRecord.ID(recordName: "alices"))
        }
        // The server's own calls are the signed-in user's: alice.
        #expect(try await server.record(for: CloudRecord.ID(recordName: "alices")).recordType == "Note")
    }

    @Test func bobsSubscriptionToTheSharedDatabaseFiresWhenAliceChangesTheList() async throws {
        try await aliceSharesHerList()
        _ = try await bob.modifySubscriptions(saving: [CloudSubscription(id: "shared", kind: .database)], deleting: [])
        _ = await server.takeNotifications()
        try await alice.save(Self.record("eggs"))
        let notifications = await server.takeNotifications()
        #expect(
            notifications.contains {
                $0.kind == .database && $0.databaseScope == .shared && $0.userRecordName == "_bob"
            })
    }

    @Test func theMetadataTellsBobWhatHeIsInvitedToBeforeHeAccepts() async throws {
        let share = try await aliceSharesHerList(accepts: false)
        let metadata = try await bob.shareMetadata(shortGUID: try #require(share.shortGUID), fetchingRootRecord: true)
        #expect(metadata.ownerUserRecordName == "_alice")
        #expect(metadata.rootRecordID == Self.bobsID("groceries"))
        #expect(metadata.rootRecord?.fields["name"] == .string("groceries"))
        #expect(metadata.share.id == Self.bobsID(share.id.recordName))
        #expect(metadata.participantRole == .privateUser)
        #expect(metadata.participantStatus == .pending)
        #expect(metadata.participantPermission == .readWrite)
        // Resolving accepts nothing.
        #expect(try await bob.allRecordZones() == [])
    }

    @Test func theMetadataOfAPublicShareOffersAStrangerItsPublicPermission() async throws {
        let share = try await aliceSharesHerList(publicPermission: .readOnly)
        let metadata = try await server.sharedDatabase(of: "_carol").shareMetadata(
            shortGUID: try #require(share.shortGUID))
        #expect(metadata.rootRecord == nil)
        #expect(metadata.participantRole == .publicUser)
        #expect(metadata.participantStatus == .unknown)
        #expect(metadata.participantPermission == .readOnly)
    }

    @Test func aPrivateSharesMetadataIsRefusedToAStranger() async throws {
        let privateShare = try await aliceSharesHerList()
        await #expect {
            _ = try await server.sharedDatabase(of: "_carol").shareMetadata(
                shortGUID: try #require(privateShare.shortGUID))
        } throws: { error in
            guard case CloudDatabaseError.permissionFailure(let reason) = error else { return false }
            return reason.contains("ask its owner to invite them")
        }
    }
}
