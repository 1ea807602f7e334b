import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// Reading CloudKit's push payloads: the forms observed from CloudKit and its Web Services long-poll.
@Suite("CloudNotification: push payloads")
struct CloudNotificationTests {
    @Test func aDatabaseSubscriptionsPush() throws {
        let userInfo: [AnyHashable: Any] = [
            "aps": ["content-available": 1],
            "ck": [
                "ce": 2, "cid": "iCloud.com.example.School", "nid": "6a3c1f0e", "ckuserid": "_9f1b",
                "met": ["dbs": 2, "sid": "school-database"],
            ] as [String: Any],
        ]
        let notification = try #require(CloudNotification(userInfo: userInfo))
        #expect(
            notification
                == CloudNotification(
                    kind: .database, subscriptionID: "school-database", databaseScope: .private,
                    containerIdentifier: "iCloud.com.example.School", notificationID: "6a3c1f0e",
                    userRecordName: "_9f1b"))
    }

    @Test func aZoneSubscriptionsPushNamesTheZoneAndItsOwner() throws {
        let userInfo: [AnyHashable: Any] = [
            "ck": [
                "cid": "iCloud.com.example.School", "fet": ["zid": "School", "zoid": "_9f1b", "sid": "zone", "dbs": 3],
            ]
        ]
        let notification = try #require(CloudNotification(userInfo: userInfo))
        #expect(notification.kind == .recordZone(CloudRecord.ZoneID(zoneName: "School", ownerName: "_9f1b")))
        #expect(notification.subscriptionID == "zone")
        #expect(notification.databaseScope == .shared)
    }

    @Test func aZonePushWithoutAnOwnerIsTheCurrentUsersZone() throws {
        let notification = try #require(CloudNotification(userInfo: ["ck": ["fet": ["zid": "School"]]]))
        #expect(notification.kind == .recordZone(CloudRecord.ZoneID(zoneName: "School")))
    }

    @Test func aQuerySubscriptionsPushFromWebServicesJSON() throws {
        let json = Data(
            """
            {"ck": {"nid": "n1", "cid": "iCloud.com.example.School",
                    "qry": {"sid": "new-students", "rid": "ada", "zid": "School", "dbs": 1, "fo": 1,
                            "af": {"name": "Ada", "grade": 3}}}}
            """.utf8)
        let notification = try #require(CloudNotification(jsonData: json))
        #expect(
            notification.kind
                == .query(
                    recordID: CloudRecord.ID(recordName: "ada", zoneID: CloudRecord.ZoneID(zoneName: "School")),
                    reason: .recordCreated, fields: ["name": "Ada", "grade": "3"]))
        #expect(notification.databaseScope == .public)
        #expect(notification.subscriptionID == "new-students")
    }

    @Test func anUnknownCloudKitFormIsStillACloudKitPush() throws {
        let notification = try #require(CloudNotification(userInfo: ["ck": ["cid": "c", "xyz": ["a": 1]]]))
        #expect(notification.kind == .unknown)
        #expect(notification.containerIdentifier == "c")
    }

    @Test func anotherPushIsNotACloudKitNotification() {
        #expect(CloudNotification(userInfo: ["aps": ["alert": "Hello"]]) == nil)
        #expect(CloudNotification(userInfo: ["ck": "not a dictionary"]) == nil)
        #expect(CloudNotification(jsonData: Data("not json".utf8)) == nil)
        #expect(CloudNotification(jsonData: Data("[1, 2]".utf8)) == nil)
    }

    @Test func oddValuesAreToleratedNotTrusted() throws {
        let notification = try #require(
            CloudNotification(userInfo: ["ck": ["met": ["dbs": 99, "sid": 7], "nid": ["nested"]]]))
        #expect(notification.kind == .database)
        #expect(notification.databaseScope == nil)
        #expect(notification.subscriptionID == "7")
        #expect(notification.notificationID == nil)
    }
}
