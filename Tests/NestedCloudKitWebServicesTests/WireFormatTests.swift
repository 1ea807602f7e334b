import CloudKitTestServer
import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitWebServices

@Suite struct WireFormatTests {
    /// 2016-01-25T22:15:43.123Z, a whole number of milliseconds.
    static let date = Date(timeIntervalSince1970: 1_453_760_143.123)
    static let target = CloudRecord.ID(recordName: "school-1", zoneID: CloudRecord.ZoneID(zoneName: "Schools"))

    /// Every field type and list type, with the JSON the documentation gives for it.
    static let cases: [(value: CloudValue, json: String)] = [
        (.string("Ada"), #"{"type":"STRING","value":"Ada"}"#),
        (.int64(-42), #"{"type":"INT64","value":-42}"#),
        (.double(2.5), #"{"type":"DOUBLE","value":2.5}"#),
        (.date(date), #"{"type":"TIMESTAMP","value":1453760143123}"#),
        (.bytes(Data("test".utf8)), #"{"type":"BYTES","value":"dGVzdA=="}"#),
        (
            .reference(CloudReference(recordID: target, action: .deleteSelf)),
            #"{"type":"REFERENCE","value":{"action":"DELETE_SELF","recordName":"school-1","zoneID":{"zoneName":"Schools"}}}"#
        ),
        (
            .asset(
                CloudAsset(size: 4, fileChecksum: "Ab==", referenceChecksum: "Cd==", wrappingKey: "Ef==", receipt: "r1")
            ),
            #"{"type":"ASSETID","value":{"fileChecksum":"Ab==","receipt":"r1","referenceChecksum":"Cd==","size":4,"wrappingKey":"Ef=="}}"#
        ),
        (
            .location(
                CloudLocation(
                    latitude: 37.33, longitude: -122.03, altitude: 10, horizontalAccuracy: 5,
                    verticalAccuracy: 3, course: 90, speed: 1.5, timestamp: date)),
            #"{"type":"LOCATION","value":{"altitude":10,"course":90,"horizontalAccuracy":5,"latitude":37.33,"longitude":-122.03,"speed":1.5,"timestamp":1453760143123,"verticalAccuracy":3}}"#
        ),
        (.stringList(["a", "b"]), #"{"type":"STRING_LIST","value":["a","b"]}"#),
        (.int64List([1, 0]), #"{"type":"INT64_LIST","value":[1,0]}"#),
        (.doubleList([0.25]), #"{"type":"DOUBLE_LIST","value":[0.25]}"#),
        (.dateList([date]), #"{"type":"TIMESTAMP_LIST","value":[1453760143123]}"#),
        (.bytesList([Data([0xFF])]), #"{"type":"BYTES_LIST","value":["/w=="]}"#),
        (
            .referenceList([CloudReference(recordID: CloudRecord.ID(recordName: "b"), action: .validate)]),
            #"{"type":"REFERENCE_LIST","value":[{"action":"VALIDATE","recordName":"b","zoneID":{"zoneName":"_defaultZone"}}]}"#
        ),
        (
            .assetList([CloudAsset(size: 1, fileChecksum: "x", downloadURL: "https://example.com/a")]),
            #"{"type":"ASSETID_LIST","value":[{"downloadURL":"https://example.com/a","fileChecksum":"x","size":1}]}"#
        ),
        (
            .locationList([CloudLocation(latitude: 1, longitude: 2)]),
            #"{"type":"LOCATION_LIST","value":[{"altitude":0,"course":-1,"horizontalAccuracy":0,"latitude":1,"longitude":2,"speed":-1,"verticalAccuracy":-1}]}"#
        ),
    ]

    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decodeField(_ json: String) throws -> CloudValue? {
        try JSONDecoder().decode(WireField.self, from: Data(json.utf8)).value
    }

    @Test(arguments: cases.indices)
    func everyFieldTypeEncodesToTheDocumentedJSONAndBack(index: Int) throws {
        let (value, json) = Self.cases[index]
        #expect(try Self.encode(WireField(value)) == json)
        #expect(try Self.decodeField(json) == value)
    }

    @Test func everyTypeHasACase() {
        #expect(Set(Self.cases.map(\.value.kind)) == Set(CloudValue.Kind.allCases))
    }

    @Test func anEmptyListComesBackAsUnknownListAndDecodesEmpty() throws {
        #expect(try Self.decodeField(#"{"type":"UNKNOWN_LIST","value":[]}"#) == .stringList([]))
        #expect(try Self.encode(WireField(.int64List([]))) == #"{"type":"INT64_LIST","value":[]}"#)
    }

    @Test func booleansAreInt64OnTheWayInAndOut() throws {
        #expect(try Self.decodeField(#"{"type":"INT64","value":true}"#) == .int64(1))
        #expect(try Self.decodeField(#"{"type":"INT64_LIST","value":[false,true]}"#) == .int64List([0, 1]))
    }

    @Test func untypedValuesTakeTheTypeTheirJSONShows() throws {
        #expect(try Self.decodeField(#"{"value":"x"}"#) == .string("x"))
        #expect(try Self.decodeField(#"{"value":7}"#) == .int64(7))
        #expect(try Self.decodeField(#"{"value":7.5}"#) == .double(7.5))
        #expect(
            try Self.decodeField(#"{"value":{"recordName":"r"}}"#)
                == .reference(CloudReference(recordID: CloudRecord.ID(recordName: "r"))))
        #expect(
            try Self.decodeField(#"{"value":[{"latitude":1,"longitude":2}]}"#)
                == .locationList([CloudLocation(latitude: 1, longitude: 2)]))
    }

    @Test func aReferenceWithoutZoneOrActionIsInTheDefaultZoneWithNoAction() throws {
        let value = try Self.decodeField(#"{"type":"REFERENCE","value":{"recordName":"r","action":"SOMETHING_NEW"}}"#)
        #expect(value == .reference(CloudReference(recordID: CloudRecord.ID(recordName: "r"), action: .none)))
    }

    @Test func aNullValueIsAClearedField() throws {
        #expect(try Self.decodeField(#"{"type":"STRING","value":null}"#) == nil)
        #expect(try Self.encode(WireField(nil)) == #"{"value":null}"#)
    }

    @Test func malformedValuesAreDecodingErrors() throws {
        #expect(throws: DecodingError.self) { try Self.decodeField(#"{"type":"BYTES","value":"not base64!"}"#) }
        #expect(throws: DecodingError.self) { try Self.decodeField(#"{"type":"DATETIME","value":1}"#) }
        #expect(throws: DecodingError.self) { try Self.decodeField(#"{"type":"UNKNOWN_LIST","value":"x"}"#) }
        #expect(throws: DecodingError.self) { try Self.decodeField(#"{"type":"INT64","value":"7"}"#) }
        #expect(throws: DecodingError.self) { try Self.decodeField(#"{"type":"TIMESTAMP","value":1e300}"#) }
        #expect(throws: DecodingError.self) { try Self.decodeField(#"{"type":"TIMESTAMP_LIST","value":[0,-9e15]}"#) }
    }

    @Test func valuesJSONCantCarryAreEncodingErrors() throws {
        #expect(throws: EncodingError.self) { try Self.encode(WireField(.double(.nan))) }
        #expect(throws: EncodingError.self) { try Self.encode(WireField(.date(Date(timeIntervalSince1970: 9e12)))) }
    }

    @Test func aResponseRecordDecodesWithItsSystemFieldsAndIgnoresUnknownKeys() throws {
        let json = try JSONSerialization.data(
            withJSONObject: WebServicesHarness.serverRecord(
                "ada", fields: ["name": ["value": "Ada", "type": "STRING"], "age": ["value": 36, "type": "INT64"]]
            ))
        let wire = try JSONDecoder().decode(WireRecord.self, from: json)
        let owners = ZoneOwners(requested: .default, answers: [wire.zoneID])
        let record = wire.cloudRecord(in: .default, owners: owners)
        var expected = CloudRecord(
            recordType: "Student", id: CloudRecord.ID(recordName: "ada"),
            fields: ["age": .int64(36), "name": .string("Ada")]
        )
        expected.systemFields = CloudRecord.SystemFields(
            changeTag: "tag-1", creationDate: Date(timeIntervalSince1970: 1_453_760_143),
            creatorUserRecordName: "_7c3f2a9d", modificationDate: Date(timeIntervalSince1970: 1_453_760_144),
            lastModifiedUserRecordName: "_7c3f2a9d", modifiedByDevice: "3"
        )
        #expect(record == expected)
        #expect(record.fields.names == ["age", "name"])
    }

    @Test func aSavedRecordSendsItsTypeFieldsAndOnlyTheChangeTagTheOperationChecks() throws {
        var record = CloudRecord(
            recordType: "Student", id: CloudRecord.ID(recordName: "ada"), fields: ["name": .string("Ada")])
        record.systemFields = CloudRecord.SystemFields(changeTag: "tag-9")
        let update = WireRecordOperation(record: record, savePolicy: .ifServerRecordUnchanged)
        #expect(
            try Self.encode(update)
                == #"{"operationType":"update","record":{"fields":{"name":{"type":"STRING","value":"Ada"}},"recordChangeTag":"tag-9","recordName":"ada","recordType":"Student"}}"#
        )
        let force = WireRecordOperation(record: record, savePolicy: .changedKeys)
        #expect(
            try Self.encode(force)
                == #"{"operationType":"forceUpdate","record":{"fields":{"name":{"type":"STRING","value":"Ada"}},"recordName":"ada","recordType":"Student"}}"#
        )
        let delete = WireRecordOperation(deleting: record.id, savePolicy: .ifServerRecordUnchanged)
        #expect(try Self.encode(delete) == #"{"operationType":"delete","record":{"recordName":"ada"}}"#)
    }

    /// The save policy and the record choose the operation: never a replace, which would erase what the record
    /// doesn't hold.
    @Test func theOperationTypeFollowsThePolicyAndTheRecord() {
        let new = CloudRecord(
            recordType: "Student", id: CloudRecord.ID(recordName: "a"), fields: ["name": .string("A")])
        var fetched = new
        fetched.systemFields = CloudRecord.SystemFields(changeTag: "t")
        var clearing = fetched
        clearing["name"] = nil
        let chosen = { (record: CloudRecord, policy: CloudRecordSavePolicy) in
            WireOperationType.saving(record, savePolicy: policy)
        }
        #expect(chosen(new, .ifServerRecordUnchanged) == .create)
        #expect(chosen(fetched, .ifServerRecordUnchanged) == .update)
        #expect(chosen(clearing, .ifServerRecordUnchanged) == .update)
        #expect(chosen(new, .changedKeys) == .forceUpdate)
        #expect(chosen(fetched, .changedKeys) == .forceUpdate)
        #expect(chosen(clearing, .changedKeys) == .forceUpdate)
        #expect(chosen(new, .allKeys) == .forceUpdate)
        #expect(chosen(fetched, .allKeys) == .forceUpdate)
        #expect(chosen(clearing, .allKeys) == .forceUpdate)
        #expect(WireOperationType.deleting(savePolicy: .ifServerRecordUnchanged) == .delete)
        #expect(WireOperationType.deleting(savePolicy: .changedKeys) == .forceDelete)
        #expect(WireOperationType.deleting(savePolicy: .allKeys) == .forceDelete)
    }

    @Test func clearedFieldsGoAsNullsAndOnlyTheFieldsTheRecordHoldsAreSent() throws {
        var record = CloudRecord(
            recordType: "Student", id: CloudRecord.ID(recordName: "a"),
            fields: ["name": .string("A"), "nickname": .string("a")])
        record.systemFields = CloudRecord.SystemFields(changeTag: "t")
        record["nickname"] = nil
        #expect(
            try Self.encode(WireRecordOperation(record: record, savePolicy: .ifServerRecordUnchanged))
                == #"{"operationType":"update","record":{"fields":{"name":{"type":"STRING","value":"A"},"nickname":{"value":null}},"recordChangeTag":"t","recordName":"a","recordType":"Student"}}"#
        )
        #expect(
            try Self.encode(WireRecordOperation(record: record, savePolicy: .changedKeys))
                == #"{"operationType":"forceUpdate","record":{"fields":{"name":{"type":"STRING","value":"A"},"nickname":{"value":null}},"recordName":"a","recordType":"Student"}}"#
        )
    }

    @Test func doublesKeepEveryBit() throws {
        for double in [38.435489999999994, 0.1 + 0.2, Double.leastNonzeroMagnitude, -Double.greatestFiniteMagnitude] {
            #expect(try Self.decodeField(Self.encode(WireField(.double(double)))) == .double(double))
        }
    }

    @Test func aQueryBecomesEqualsFiltersAndSorts() throws {
        let school = CloudRecord.ID(recordName: "school-1")
        let query = CloudQuery(
            recordType: "Student",
            predicate: .and([.references(school, in: "school"), .equals(field: "grade", value: .int64(3)), .all]),
            sortDescriptors: [CloudQuery.SortDescriptor(field: "name", ascending: false)]
        )
        #expect(
            try Self.encode(WireQuery(query))
                == #"{"filterBy":[{"comparator":"EQUALS","fieldName":"school","fieldValue":{"type":"REFERENCE","value":{"action":"NONE","recordName":"school-1","zoneID":{"zoneName":"_defaultZone"}}}},{"comparator":"EQUALS","fieldName":"grade","fieldValue":{"type":"INT64","value":3}}],"recordType":"Student","sortBy":[{"ascending":false,"fieldName":"name"}]}"#
        )
        #expect(
            throws: CloudDatabaseError.invalidArguments("a query compares the field tags with one value, not a list")
        ) {
            try WireQuery(
                CloudQuery(recordType: "Student", predicate: .equals(field: "tags", value: .stringList(["a"]))))
        }
    }

    @Test func aZoneOwnedByTheCurrentUserGoesWithoutItsOwner() throws {
        #expect(try Self.encode(WireZoneID(CloudRecord.ZoneID(zoneName: "Schools"))) == #"{"zoneName":"Schools"}"#)
        #expect(
            try Self.encode(WireZoneID(CloudRecord.ZoneID(zoneName: "Shared", ownerName: "_other")))
                == #"{"ownerRecordName":"_other","zoneName":"Shared"}"#)
    }

    @Test func anErrorItemInARecordsArrayDecodesAsTheError() throws {
        let json =
            #"{"records":[{"recordName":"a","serverErrorCode":"NOT_FOUND","reason":"gone","unknownKey":1},{"recordName":"b","recordType":"T","fields":{}}]}"#
        let response = try JSONDecoder().decode(WireRecordsResponse.self, from: Data(json.utf8))
        #expect(
            response.records[0].error == WireServerError(recordName: "a", serverErrorCode: "NOT_FOUND", reason: "gone"))
        #expect(response.records[1].item?.recordName == "b")
    }
    // MARK: Sharing

    @Test func aChildSendsItsParentByNameAndARootItsNewShare() throws {
        let zone = CloudRecord.ZoneID(zoneName: "Lists")
        var item = CloudRecord(recordType: "Item", id: CloudRecord.ID(recordName: "milk", zoneID: zone))
        item.parentID = CloudRecord.ID(recordName: "groceries", zoneID: zone)
        let json = try Self.encode(WireRecord(item, sendingChangeTag: false))
        #expect(json.contains(#""parent":{"recordName":"groceries"}"#))

        let list = CloudRecord(recordType: "List", id: CloudRecord.ID(recordName: "groceries", zoneID: zone))
        var share = try CloudShare(rootRecord: list, shareID: CloudRecord.ID(recordName: "share", zoneID: zone))
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        share.publicPermission = .readOnly  // the wire form of each part; a server refuses the two together
        var saves = [list, share.record].map { WireRecordOperation(record: $0, savePolicy: .ifServerRecordUnchanged) }
        CloudKitWebServicesDatabase.pointRootsAtTheirNewShares(&saves, records: [list, share.record])
        #expect(try Self.encode(saves[0].record).contains(#""share":{"recordName":"share"}"#))
        let shareJSON = try Self.encode(saves[1].record)
        #expect(shareJSON.contains(#""publicPermission":"READ_ONLY""#))
        #expect(
            shareJSON.contains(
                #""participants":[{"acceptanceStatus":"PENDING","permission":"READ_WRITE","type":"PRIVATE_USER","userIdentity":{"userRecordName":"_bob"}}]"#
            ))
    }

    @Test func aShareInAResponseDecodesWithItsOwnerParticipantsAndURL() throws {
        let json = #"""
            {"recordName":"share","recordType":"cloudkit.share","recordChangeTag":"t1",
             "zoneID":{"zoneName":"Lists","ownerRecordName":"_alice"},"fields":{"cloudkit.title":{"type":"STRING","value":"Groceries"}},
             "shortGUID":"0abc","publicPermission":"NONE",
             "owner":{"userIdentity":{"userRecordName":"_alice"},"type":"OWNER","acceptanceStatus":"ACCEPTED","permission":"READ_WRITE","participantId":"p0"},
             "participants":[{"userIdentity":{"lookupInfo":{"emailAddress":"bob@example.com"}},"type":"PRIVATE_USER","acceptanceStatus":"PENDING","permission":"READ_ONLY","participantId":"p1"}]}
            """#
        let wire = try JSONDecoder().decode(WireRecord.self, from: Data(json.utf8))
        let owners = ZoneOwners(currentUserAliases: ["_alice"])
        let share = try CloudShare(record: wire.cloudRecord(in: CloudRecord.ZoneID(zoneName: "Lists"), owners: owners))
        #expect(share.title == "Groceries")
        #expect(share.shortGUID == "0abc")
        #expect(share.url == URL(string: "https://www.icloud.com/share/0abc"))
        #expect(
            share.participants == [
                .init(
                    userRecordName: "_alice", role: .owner, permission: .readWrite, acceptanceStatus: .accepted,
                    participantID: "p0"),
                .init(emailAddress: "bob@example.com", permission: .readOnly, participantID: "p1"),
            ])
        // The wire doesn't say which record a share shares.
        #expect(share.rootRecordID == nil)
        #expect(!share.isZoneWide)
    }
}
