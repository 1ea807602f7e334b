import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

/// What only the simulated server's shared databases do: the server's own calls are its signed-in user's, and
/// pushes are collected (``InMemoryCloudDatabase/takeNotifications()``). The rest of the shared database runs
/// against every server (`SharedDatabaseConformanceTests`).
@Suite("Sharing: the simulated server's users")
struct SharedDatabaseTests {
    let server = InMemoryCloudDatabase(userRecordName: "_alice")
    var alice: UserCloudDatabase { server.privateDatabase(of: "_alice") }
    var bob: UserCloudDatabase { server.sharedDatabase(of: "_bob") }

    @Test func eachUsersPrivateDatabaseIsTheirsWhoeverIsSignedIn() async throws {
        let bobsPrivate = server.privateDatabase(of: "_bob")
        _ = try await bobsPrivate.save(CloudRecord(recordType: "Note", id: CloudRecord.ID(recordName: "bobs")))
        _ = try await alice.save(CloudRecord(recordType: "Note", id: CloudRecord.ID(recordName: "alices")))
        #expect(try await bobsPrivate.userRecordName() == "_bob")
        await #expect(throws: CloudDatabaseError.unknownItem(CloudRecord.ID(recordName: "alices"))) {
            _ = try await bobsPrivate.record(for: CloudRecord.ID(recordName: "alices"))
        }
        // The server's own calls are the signed-in user's: alice.
        #expect(try await server.record(for: CloudRecord.ID(recordName: "alices")).recordType == "Note")
    }

    @Test func bobsSubscriptionToTheSharedDatabaseFiresWhenAliceChangesTheList() async throws {
        let lists = CloudRecord.ZoneID(zoneName: "Lists")
        _ = try await alice.modifyRecordZones(saving: [lists], deleting: [])
        let list = CloudRecord(recordType: "List", id: CloudRecord.ID(recordName: "groceries", zoneID: lists))
        var share = try CloudShare(rootRecord: list)
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        let saved = try await alice.modifyRecords(
            saving: [list, share.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        let shortGUID = try CloudShare(record: try #require(saved.saveResults[share.id]).get()).shortGUID
        _ = try await bob.acceptShare(shortGUID: try #require(shortGUID))
        _ = try await bob.modifySubscriptions(saving: [CloudSubscription(id: "shared", kind: .database)], deleting: [])
        _ = await server.takeNotifications()

        var eggs = CloudRecord(recordType: "Item", id: CloudRecord.ID(recordName: "eggs", zoneID: lists))
        eggs.parentID = list.id
        _ = try await alice.save(eggs)
        let notifications = await server.takeNotifications()
        #expect(
            notifications.contains {
                $0.kind == .database && $0.databaseScope == .shared && $0.userRecordName == "_bob"
            })
    }
}
