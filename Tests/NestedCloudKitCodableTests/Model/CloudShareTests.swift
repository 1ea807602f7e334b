import Foundation
import NestedCloudKitCodable
import Testing

@Suite("Share model")
struct CloudShareTests {
    let lists = CloudRecord.ZoneID(zoneName: "Lists")

    var listRecord: CloudRecord {
        CloudRecord(
            recordType: "List", id: CloudRecord.ID(recordName: "groceries", zoneID: lists),
            fields: ["name": .string("Groceries")])
    }

    @Test func aRecordShareIsAShareRecordInItsRootsZone() throws {
        let share = try CloudShare(
            rootRecord: listRecord, shareID: CloudRecord.ID(recordName: "share-1", zoneID: lists))
        #expect(share.record.recordType == "cloudkit.share")
        #expect(share.id == CloudRecord.ID(recordName: "share-1", zoneID: lists))
        #expect(share.rootRecordID == listRecord.id)
        #expect(!share.isZoneWide)
        #expect(share.publicPermission == .none)
        #expect(share.participants.isEmpty)
        #expect(share.owner == nil)
        #expect(share.url == nil)
        #expect(share.shortGUID == nil)
    }

    @Test func aShareWithoutAnIDGetsAUniqueNameInTheRootsZone() throws {
        let first = try CloudShare(rootRecord: listRecord)
        let second = try CloudShare(rootRecord: listRecord)
        #expect(first.id.zoneID == lists)
        #expect(first.id != second.id)
    }

    @Test func aZoneWideShareHasCloudKitsZoneShareName() throws {
        let share = try CloudShare(zoneID: lists)
        #expect(share.id == CloudRecord.ID(recordName: "cloudkit.zoneshare", zoneID: lists))
        #expect(share.isZoneWide)
        #expect(share.rootRecordID == nil)
    }

    @Test func theDefaultZoneIsRefusedWhoeverOwnsIt() {
        let bobsDefaultZone = CloudRecord.ZoneID(zoneName: "_defaultZone", ownerName: "_bob")
        #expect(throws: CloudShareError.defaultZoneCannotBeShared(.default)) {
            try CloudShare(rootRecordID: CloudRecord.ID(recordName: "list"))
        }
        #expect(throws: CloudShareError.defaultZoneCannotBeShared(bobsDefaultZone)) {
            try CloudShare(zoneID: bobsDefaultZone)
        }
        let error = CloudShareError.defaultZoneCannotBeShared(.default)
        #expect(error.description.contains("custom zone"))
        #expect(error.zoneID == .default && error.recordID == nil)
        #expect(CloudShareError.participantRoleNotInvitable(.owner).role == .owner)
    }

    @Test func aShareIDInAnotherZoneThanItsRootIsRefused() {
        let elsewhere = CloudRecord.ID(recordName: "share", zoneID: CloudRecord.ZoneID(zoneName: "Other"))
        let error = #expect(throws: CloudShareError.self) { try CloudShare(rootRecord: listRecord, shareID: elsewhere) }
        #expect(error == .shareOutsideRootZone(shareID: elsewhere, rootRecordID: listRecord.id))
        #expect(error?.code == .shareOutsideRootZone && error?.recordID == elsewhere)
        #expect(error?.code != CloudShareError.participantWithoutIdentity.code)
    }

    @Test func theTitleAndTypeAreTheShareRecordsFields() throws {
        var share = try CloudShare(zoneID: lists)
        share.title = "Groceries"
        share.shareType = "com.example.list"
        #expect(share.record["cloudkit.title"] == .string("Groceries"))
        #expect(share.record["cloudkit.type"] == .string("com.example.list"))
        share.title = nil
        #expect(share.record["cloudkit.title"] == nil)
        #expect(share.title == nil)
    }

    @Test func invitingAUserTwiceChangesTheirPermission() throws {
        var share = try CloudShare(rootRecord: listRecord)
        try share.addParticipant(.init(userRecordName: "_bob"))
        try share.addParticipant(.init(emailAddress: "Carol@Example.com", permission: .readWrite))
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        try share.addParticipant(.init(emailAddress: "carol@example.com", permission: .readOnly))
        #expect(
            share.participants == [
                .init(userRecordName: "_bob", permission: .readWrite),
                .init(emailAddress: "Carol@Example.com", permission: .readOnly),
            ])
        #expect(share.participants.allSatisfy { $0.acceptanceStatus == .pending && $0.role == .privateUser })
    }

    @Test func onlyPrivateUsersWithAnIdentityAreInvited() throws {
        var share = try CloudShare(rootRecord: listRecord)
        #expect(throws: CloudShareError.participantWithoutIdentity) {
            try share.addParticipant(.init(permission: .readWrite))
        }
        #expect(throws: CloudShareError.participantRoleNotInvitable(.owner)) {
            try share.addParticipant(.init(userRecordName: "_alice", role: .owner))
        }
        #expect(throws: CloudShareError.participantRoleNotInvitable(.publicUser)) {
            try share.addParticipant(.init(userRecordName: "_carol", role: .publicUser))
        }
        #expect(share.participants.isEmpty)
    }

    @Test func removingAParticipantLeavesTheOthers() throws {
        var share = try CloudShare(rootRecord: listRecord)
        try share.addParticipant(.init(userRecordName: "_bob"))
        try share.addParticipant(.init(userRecordName: "_carol"))
        let removed = share.removeParticipant(.init(userRecordName: "_bob"))
        let removedAgain = share.removeParticipant(.init(userRecordName: "_bob"))
        #expect(removed)
        #expect(!removedAgain)
        #expect(share.participants.map(\.userRecordName) == ["_carol"])
    }

    @Test func aShareReadBackFromItsRecordIsTheSameShare() throws {
        var share = try CloudShare(rootRecord: listRecord)
        share.title = "Groceries"
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        #expect(try CloudShare(record: share.record) == share)
        var publicShare = try CloudShare(rootRecord: listRecord)
        publicShare.publicPermission = .readOnly
        #expect(try CloudShare(record: publicShare.record) == publicShare)
    }

    @Test func aPublicShareInvitesNoOneAsCloudKitChangesParticipantsOnlyOfAPrivateShare() throws {
        var share = try CloudShare(rootRecord: listRecord)
        share.publicPermission = .readWrite
        #expect(throws: CloudShareError.publicShareWithInvitedParticipants(share.id)) {
            try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        }
        #expect(share.participants.isEmpty)
        share.publicPermission = .none
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        #expect(share.participants.map(\.userRecordName) == ["_bob"])
    }

    @Test func aParticipantIsRemovedByUserRecordNameOrByEmailAddress() throws {
        var share = try CloudShare(rootRecord: listRecord)
        try share.addParticipant(.init(userRecordName: "_bob"))
        try share.addParticipant(.init(emailAddress: "Carol@Example.com"))
        try share.addParticipant(.init(userRecordName: "_dave"))
        let removed = [
            share.removeParticipant(userRecordName: "_bob"), share.removeParticipant(userRecordName: "_bob"),
            share.removeParticipant(emailAddress: "carol@example.com"),
            share.removeParticipant(emailAddress: "erin@example.com"),
        ]
        #expect(removed == [true, false, true, false])
        #expect(share.participants.map(\.userRecordName) == ["_dave"])
    }

    @Test func aRecordOfAnotherTypeIsNotAShare() {
        #expect(throws: CloudShareError.notAShare(listRecord.id, recordType: "List")) {
            try CloudShare(record: listRecord)
        }
    }

    @Test func permissionsSayWhatTheyAllow() {
        #expect(CloudShare.Permission.readWrite.allowsWriting)
        #expect(!CloudShare.Permission.readOnly.allowsWriting)
        #expect(CloudShare.Permission.readOnly.allowsReading)
        #expect(!CloudShare.Permission.none.allowsReading)
        #expect(CloudShare.Permission.allCases.map(\.rawValue) == ["NONE", "READ_ONLY", "READ_WRITE"])
        #expect(CloudShare.Role.allCases.map(\.rawValue) == ["OWNER", "PRIVATE_USER", "PUBLIC_USER"])
    }
}

@Suite("Record parents and shares")
struct CloudRecordSharingTests {
    let zone = CloudRecord.ZoneID(zoneName: "Lists")

    @Test func theParentAndShareStateTakePartInEquality() throws {
        var item = CloudRecord(recordType: "Item", id: CloudRecord.ID(recordName: "milk", zoneID: zone))
        let plain = item
        item.parentID = CloudRecord.ID(recordName: "groceries", zoneID: zone)
        #expect(item != plain)
        #expect(item.parentID == CloudRecord.ID(recordName: "groceries", zoneID: zone))
        item.parentID = nil
        #expect(item == plain)
        #expect(item.hashValue == plain.hashValue)

        var share = try CloudShare(rootRecordID: CloudRecord.ID(recordName: "groceries", zoneID: zone))
        let unshared = share
        share.publicPermission = .readWrite
        #expect(share.record != unshared.record)
    }

    @Test func theParentShareIDAndShareStateSurviveTheRecordsCodableForm() throws {
        var item = CloudRecord(
            recordType: "Item", id: CloudRecord.ID(recordName: "milk", zoneID: zone), fields: ["n": .int64(2)])
        item.parentID = CloudRecord.ID(recordName: "groceries", zoneID: zone)
        item.systemFields = CloudRecord.SystemFields(
            changeTag: "t1", shareID: CloudRecord.ID(recordName: "share-1", zoneID: zone))
        var share = try CloudShare(rootRecordID: CloudRecord.ID(recordName: "groceries", zoneID: zone))
        share.title = "Groceries"
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        share.publicPermission = .readOnly  // a share the server refuses, but the model keeps what it holds

        for record in [item, share.record] {
            let decoded = try JSONDecoder().decode(CloudRecord.self, from: try JSONEncoder().encode(record))
            #expect(decoded == record)
        }
    }

    @Test func aRecordStoredBeforeSharingExistedDecodesWithNeither() throws {
        let stored =
            #"{"recordType":"Item","id":{"recordName":"milk","zoneID":{"zoneName":"Lists","#
            + #""ownerName":"__defaultOwner__"}},"fields":[],"systemFields":{"changeTag":"t1"}}"#
        let record = try JSONDecoder().decode(CloudRecord.self, from: Data(stored.utf8))
        #expect(record.parentID == nil)
        #expect(record.systemFields?.shareID == nil)
        #expect(record.systemFields?.changeTag == "t1")
    }
}
