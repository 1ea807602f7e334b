import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// The 1.0 School example encodes to the records one would expect.
@Suite("School example")
struct SchoolExampleTests {
    @Test func schoolEncodesToLinkedRecordsInDependencyOrder() throws {
        try expectRecords(
            of: School.example,
            equal: [
                record(
                    "Person", "bart",
                    [
                        "id": .string("bart"), "name": .string("Bart"),
                        "birthDate": .date(.milliseconds(1_000_000_000_000)),
                    ]),
                record(
                    "Person", "lisa",
                    [
                        "id": .string("lisa"), "name": .string("Lisa"),
                        "birthDate": .date(.milliseconds(1_100_000_000_000)),
                    ]),
                record(
                    "Person", "skinner",
                    [
                        "id": .string("skinner"),
                        "name": .string("Seymour Skinner"), "birthDate": .date(.milliseconds(-100_000_000_000)),
                        "picture": .bytes(Data([0x89, 0x50, 0x4E, 0x47])),
                    ]),
                record(
                    "Book", "book-1",
                    [
                        "id": .string("book-1"),
                        "title": .string("The Art of Computer Programming"), "pages": .int64(672),
                        "available": .int64(1),
                    ]),
                record(
                    "Book", "book-2",
                    [
                        "id": .string("book-2"),
                        "title": .string("Structure and Interpretation"), "pages": .int64(657), "available": .int64(0),
                    ]),
                record(
                    "School", "school-1",
                    [
                        "id": .string("school-1"),
                        "name": .string("Springfield Elementary"),
                        "location": .location(CloudLocation(latitude: -30.0346, longitude: -51.2177)),
                        "students": .referenceList([
                            CloudReference(recordID: CloudRecord.ID(recordName: "bart")),
                            CloudReference(recordID: CloudRecord.ID(recordName: "lisa")),
                        ]),
                        "director": reference("skinner", .validate),
                        "books": .referenceList([
                            CloudReference(recordID: CloudRecord.ID(recordName: "book-1")),
                            CloudReference(recordID: CloudRecord.ID(recordName: "book-2")),
                        ]),
                    ]),
            ])
    }

    @Test func schoolInACustomZoneKeepsEveryReferenceInThatZone() throws {
        let zone = CloudRecord.ZoneID(zoneName: "Schools", ownerName: "_owner")
        let records = try CKRecordEncoder(zoneID: zone).encode(School.example)
        #expect(records.allSatisfy { $0.id.zoneID == zone })
        let references = records.flatMap { record in
            record.fields.flatMap { field -> [CloudReference] in
                switch field.value {
                case .reference(let reference): [reference]
                case .referenceList(let references): references
                default: []
                }
            }
        }
        #expect(references.count == 5)
        #expect(references.allSatisfy { $0.recordID.zoneID == zone })
    }
}
