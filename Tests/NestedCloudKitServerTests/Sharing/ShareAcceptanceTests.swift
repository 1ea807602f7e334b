import Foundation
import NestedCloudKitCodable
import NestedCloudKitRules
import NestedCloudKitServer
import Testing

/// Accepting a share on the simulated server, with alice, bob and carol, and what a share lets each of them do
/// with a record (``ShareAccess``).
@Suite("Sharing: accepting a share")
struct ShareAcceptanceTests {
    static let lists = CloudRecord.ZoneID(zoneName: "Lists")
    let list = CloudRecord(
        recordType: "List", id: CloudRecord.ID(recordName: "groceries", zoneID: lists),
        fields: ["name": .string("Groceries")])

    var item: CloudRecord {
        var item = CloudRecord(
            recordType: "Item", id: CloudRecord.ID(recordName: "milk", zoneID: Self.lists),
            fields: ["name": .string("Milk")])
        item.parentID = list.id
        return item
    }

    /// A server where alice shared her list with bob (read-write) or, when `publicPermission` isn't `none`, with
    /// anyone holding the URL (CloudKit doesn't mix the two); signed in as alice.
    func aliceSharesHerList(publicPermission: CloudShare.Permission = .none) async throws -> (
        server: InMemoryCloudDatabase, share: CloudShare
    ) {
        let server = InMemoryCloudDatabase(userRecordName: "_alice")
        _ = try await server.modifyRecordZones(saving: [Self.lists], deleting: [])
        var share = try CloudShare(rootRecord: list)
        share.publicPermission = publicPermission
        if publicPermission == .none { try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite)) }
        let results = try await server.modifyRecords(
            saving: [list, item, share.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        return (server, try CloudShare(record: try #require(results.saveResults[share.id]).get()))
    }

    @Test func anInvitedUserAcceptsWithThePermissionTheOwnerGaveThem() async throws {
        let (server, share) = try await aliceSharesHerList()
        let shortGUID = try #require(share.shortGUID)

        await server.signIn(as: "_bob")
        let accepted = try await server.acceptShare(shortGUID: shortGUID)
        let bob = try #require(accepted.participants.first { $0.userRecordName == "_bob" })
        #expect(bob.acceptanceStatus == .accepted)
        #expect(bob.permission == .readWrite)
        #expect(bob.role == .privateUser)

        // The owner sees the acceptance in her database, as a new version of the share.
        await server.signIn(as: "_alice")
        let stored = try CloudShare(record: try await server.record(for: share.id))
        #expect(stored.participants == accepted.participants)
        #expect(stored.systemFields == accepted.systemFields)
        // Bob names the share in alice's zone, as his shared database does.
        #expect(accepted.id.zoneID == CloudRecord.ZoneID(zoneName: "Lists", ownerName: "_alice"))
        #expect(accepted.id.recordName == share.id.recordName)
        #expect(stored.systemFields?.changeTag != share.systemFields?.changeTag)
        #expect(stored.owner?.userRecordName == "_alice")
    }

    @Test func anyoneWithThePublicURLJoinsAsAPublicUser() async throws {
        let (server, share) = try await aliceSharesHerList(publicPermission: .readOnly)
        await server.signIn(as: "_carol")
        let accepted = try await server.acceptShare(shortGUID: try #require(share.shortGUID))
        let carol = try #require(accepted.participants.first { $0.userRecordName == "_carol" })
        #expect(carol.role == .publicUser)
        #expect(carol.permission == .readOnly)
        #expect(carol.acceptanceStatus == .accepted)
    }

    @Test func aPrivateShareLetsInOnlyItsParticipants() async throws {
        let (server, share) = try await aliceSharesHerList()
        await server.signIn(as: "_carol")
        await #expect {
            _ = try await server.acceptShare(shortGUID: try #require(share.shortGUID))
        } throws: { error in
            guard case .permissionFailure(let reason)? = (error as? CloudDatabaseError)?.kind else { return false }
            return reason.contains("_carol isn't one of its participants")
        }
    }

    @Test func theOwnerCantAcceptHerOwnShare() async throws {
        let (server, share) = try await aliceSharesHerList(publicPermission: .readWrite)
        await #expect {
            _ = try await server.acceptShare(shortGUID: try #require(share.shortGUID))
        } throws: { error in
            guard case .invalidArguments(let reason)? = (error as? CloudDatabaseError)?.kind else { return false }
            return reason.contains("only other users accept a share")
        }
    }

    @Test func aForgedShortGUIDFindsNothing() async throws {
        let (server, share) = try await aliceSharesHerList(publicPermission: .readWrite)
        await server.signIn(as: "_bob")
        let forged = String(try #require(share.shortGUID).reversed())
        await #expect {
            _ = try await server.acceptShare(shortGUID: forged)
        } throws: { error in
            guard case .invalidArguments(let reason)? = (error as? CloudDatabaseError)?.kind else { return false }
            return reason.contains("no share has the short GUID \(forged)")
        }
    }

    // MARK: What a share lets a user do

    /// Records in memory, for the access rules.
    struct Records: CloudRecordStore {
        var records: [CloudRecord.ID: CloudRecord] = [:]
        init(_ records: [CloudRecord]) { for record in records { self.records[record.id] = record } }
        func record(withID id: CloudRecord.ID) -> CloudRecord? { records[id] }
        func ancestor(of id: CloudRecord.ID, changeTag: String) -> CloudRecord? { nil }
        func referenceHolders(of id: CloudRecord.ID) -> [(holder: CloudRecord.ID, action: CloudReference.Action)] {
            []
        }
        func containsZone(_ zoneID: CloudRecord.ZoneID) -> Bool { true }
    }

    func shareRecord(
        root: CloudRecord.ID?, participants: [CloudShare.Participant], name: String = "share"
    ) -> CloudRecord {
        var record = CloudRecord(
            recordType: CloudShare.recordType,
            id: CloudRecord.ID(recordName: root == nil ? CloudShare.zoneWideRecordName : name, zoneID: Self.lists))
        record.shareContents = CloudShare.Contents(rootRecordID: root, participants: participants)
        return record
    }

    @Test func anAcceptedShareCoversItsRootAndTheRecordsBelowIt() throws {
        var note = CloudRecord(recordType: "Note", id: CloudRecord.ID(recordName: "note", zoneID: Self.lists))
        note.parentID = item.id
        let other = CloudRecord(recordType: "List", id: CloudRecord.ID(recordName: "todo", zoneID: Self.lists))
        let share = shareRecord(
            root: list.id,
            participants: [
                .init(userRecordName: "_alice", role: .owner, permission: .readWrite, acceptanceStatus: .accepted),
                .init(userRecordName: "_bob", permission: .readWrite, acceptanceStatus: .accepted),
                .init(userRecordName: "_carol", permission: .readOnly, acceptanceStatus: .pending),
            ])
        let store = Records([list, item, note, other, share])
        func permission(_ user: String, _ id: CloudRecord.ID) throws -> CloudShare.Permission? {
            try ShareAccess.permission(of: user, on: id, in: store, shares: [share])
        }
        #expect(try permission("_bob", list.id) == .readWrite)
        #expect(try permission("_bob", item.id) == .readWrite)
        #expect(try permission("_bob", note.id) == .readWrite)
        #expect(try permission("_bob", share.id) == .readWrite)
        #expect(try permission("_bob", other.id) == nil)
        // Pending isn't accepted; the owner's access isn't a share's.
        #expect(try permission("_carol", list.id) == nil)
        #expect(try permission("_alice", list.id) == nil)
        #expect(try permission("_dave", item.id) == nil)
    }

    @Test func aZoneWideShareCoversEveryRecordAndTheMostPermissiveShareWins() throws {
        let other = CloudRecord(recordType: "List", id: CloudRecord.ID(recordName: "todo", zoneID: Self.lists))
        let zoneShare = shareRecord(
            root: nil, participants: [.init(userRecordName: "_bob", permission: .readOnly, acceptanceStatus: .accepted)]
        )
        let listShare = shareRecord(
            root: list.id,
            participants: [.init(userRecordName: "_bob", permission: .readWrite, acceptanceStatus: .accepted)])
        let store = Records([list, item, other, zoneShare, listShare])
        let shares = [zoneShare, listShare]
        #expect(try ShareAccess.permission(of: "_bob", on: other.id, in: store, shares: shares) == .readOnly)
        #expect(try ShareAccess.permission(of: "_bob", on: item.id, in: store, shares: shares) == .readWrite)
    }

    @Test func aCycleOfParentsEndsTheWalk() throws {
        var first = CloudRecord(recordType: "Item", id: CloudRecord.ID(recordName: "a", zoneID: Self.lists))
        var second = CloudRecord(recordType: "Item", id: CloudRecord.ID(recordName: "b", zoneID: Self.lists))
        first.parentID = second.id
        second.parentID = first.id
        let share = shareRecord(
            root: list.id,
            participants: [.init(userRecordName: "_bob", permission: .readWrite, acceptanceStatus: .accepted)])
        let store = Records([first, second, list, share])
        #expect(try ShareAccess.permission(of: "_bob", on: first.id, in: store, shares: [share]) == nil)
    }
}
