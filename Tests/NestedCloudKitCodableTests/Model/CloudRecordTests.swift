import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

@Suite("Record model")
struct CloudRecordTests {
    @Test func fieldsKeepTheOrderTheyWereSetIn() {
        var fields: CloudRecord.Fields = ["b": .int64(1), "a": .int64(2)]
        fields["c"] = .string("x")
        fields["b"] = .int64(3)
        #expect(fields.names == ["b", "a", "c"])
        #expect(fields.map(\.value) == [.int64(3), .int64(2), .string("x")])
        fields["a"] = nil
        #expect(fields.names == ["b", "c"])
        #expect(fields["c"] == .string("x"))
        #expect(fields["a"] == nil)
    }

    @Test func fieldsAreEqualWhateverTheirOrder() {
        let forward: CloudRecord.Fields = ["a": .int64(1), "b": .string("x")]
        let backward: CloudRecord.Fields = ["b": .string("x"), "a": .int64(1)]
        #expect(forward == backward)
        #expect(forward.hashValue == backward.hashValue)
        #expect(forward != ["a": .int64(1), "b": .string("y")])
        #expect(forward != ["a": .int64(1)])
    }

    @Test func defaultZoneIsCloudKitsDefaultZoneOfTheCurrentUser() {
        #expect(CloudRecord.ZoneID.default.zoneName == "_defaultZone")
        #expect(CloudRecord.ZoneID.default.ownerName == "__defaultOwner__")
        #expect(CloudRecord.ID(recordName: "r").zoneID == .default)
    }

    @Test func referencedRecordIDsListsReferencesAndReferenceListsInFieldOrder() {
        let record = CloudRecord(
            recordType: "T", id: CloudRecord.ID(recordName: "r"),
            fields: [
                "one": reference("x"), "name": .string("n"),
                "many": .referenceList([CloudReference(recordID: CloudRecord.ID(recordName: "y"))]),
            ])
        #expect(record.referencedRecordIDs.map(\.recordName) == ["x", "y"])
    }

    @Test func valueKindsAreNamedAsWebServicesNamesThem() {
        #expect(CloudValue.date(.now).kind.rawValue == "TIMESTAMP")
        #expect(CloudValue.assetList([]).kind == .assetList)
        #expect(CloudValue.Kind.assetList.rawValue == "ASSETID_LIST")
        #expect(CloudValue.Kind.allCases.filter(\.isList).count == 8)
    }

    @Test func normalizedDateTruncatesToTheMillisecond() {
        #expect(CloudValue.normalizedDate(Date(timeIntervalSince1970: 12.345_678)) == .milliseconds(12_345))
        #expect(CloudValue.normalizedDate(.milliseconds(-5)) == .milliseconds(-5))
    }

    @Test func modelValuesRoundTripThroughCodable() throws {
        let values = (
            CloudRecord.ID(recordName: "r", zoneID: CloudRecord.ZoneID(zoneName: "z", ownerName: "o")),
            CloudReference(recordID: CloudRecord.ID(recordName: "t"), action: .validate),
            CloudLocation(latitude: 1, longitude: 2, timestamp: .milliseconds(3))
        )
        #expect(try JSONDecoder().decode(CloudRecord.ID.self, from: JSONEncoder().encode(values.0)) == values.0)
        #expect(try JSONDecoder().decode(CloudReference.self, from: JSONEncoder().encode(values.1)) == values.1)
        #expect(try JSONDecoder().decode(CloudLocation.self, from: JSONEncoder().encode(values.2)) == values.2)
    }
}
