import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// Nested `CKEncodable` values become records of their own, linked by references.
@Suite("References")
struct ReferenceTests {
    struct Author: CKEncodable, Identifiable, Equatable {
        var id: String
        var name: String
    }

    struct Article: CKEncodable, Identifiable {
        var id: String
        var author: Author
        var reviewer: Author?
        var editors: [Author]
        var tags: Set<String> = []

        func cloudKitReferenceActions() -> [String: CloudReference.Action] {
            ["author": .deleteSelf, "editors": .validate]
        }
    }

    @Test func nestedValuesBecomeRecordsLinkedByReferencesWithEachPropertysAction() throws {
        let article = Article(
            id: "a1", author: Author(id: "ann", name: "Ann"), reviewer: Author(id: "rob", name: "Rob"),
            editors: [Author(id: "eve", name: "Eve"), Author(id: "ed", name: "Ed")]
        )
        try expectRecords(
            of: article,
            equal: [
                record("Author", "ann", ["id": .string("ann"), "name": .string("Ann")]),
                record("Author", "rob", ["id": .string("rob"), "name": .string("Rob")]),
                record("Author", "eve", ["id": .string("eve"), "name": .string("Eve")]),
                record("Author", "ed", ["id": .string("ed"), "name": .string("Ed")]),
                record(
                    "Article", "a1",
                    [
                        "id": .string("a1"),
                        "author": reference("ann", .deleteSelf),
                        "reviewer": reference("rob"),
                        "editors": .referenceList([
                            CloudReference(recordID: CloudRecord.ID(recordName: "eve"), action: .validate),
                            CloudReference(recordID: CloudRecord.ID(recordName: "ed"), action: .validate),
                        ]),
                    ]),
            ])
    }

    @Test func nilNestedValueAndEmptyReferenceListAreLeftOut() throws {
        let article = Article(id: "a1", author: Author(id: "ann", name: "Ann"), reviewer: nil, editors: [])
        try expectRecords(
            of: article,
            equal: [
                record("Author", "ann", ["id": .string("ann"), "name": .string("Ann")]),
                record("Article", "a1", ["id": .string("a1"), "author": reference("ann", .deleteSelf)]),
            ])
    }

    struct Team: CKEncodable, Identifiable {
        var id: String
        var members: Set<Member>
    }

    struct Member: CKEncodable, Identifiable, Hashable {
        var id: String
    }

    @Test func setOfNestedValuesBecomesAReferenceListSortedByName() throws {
        let team = Team(id: "t", members: [Member(id: "c"), Member(id: "a"), Member(id: "b")])
        try expectRecords(
            of: team,
            equal: [
                record("Member", "a", ["id": .string("a")]),
                record("Member", "b", ["id": .string("b")]),
                record("Member", "c", ["id": .string("c")]),
                record(
                    "Team", "t",
                    [
                        "id": .string("t"),
                        "members": .referenceList(
                            ["a", "b", "c"].map {
                                CloudReference(recordID: CloudRecord.ID(recordName: $0))
                            }),
                    ]),
            ])
    }

    @Test func everyRecordAndReferenceIsInTheEncodersZone() throws {
        let zone = CloudRecord.ZoneID(zoneName: "Articles")
        let article = Article(id: "a1", author: Author(id: "ann", name: "Ann"), editors: [Author(id: "ed", name: "Ed")])
        let records = try records(of: article, with: CKRecordEncoder(zoneID: zone))
        #expect(records.map(\.id.zoneID) == [zone, zone, zone])
        let root = try #require(records.last)
        #expect(root["author"] == reference("ann", .deleteSelf, zone: zone))
        #expect(
            root["editors"]
                == .referenceList([
                    CloudReference(recordID: CloudRecord.ID(recordName: "ed", zoneID: zone), action: .validate)
                ]))
    }

    struct Wrapper: Encodable { var author: Author }
    struct Holder: CKEncodable {
        var cloudKitIdentifier: String { "h" }
        var wrapped: Wrapper
    }

    @Test func nestedValueInsideAnEmbeddedValueIsAnErrorNamingItsPath() throws {
        let error = try encodingError(of: Holder(wrapped: Wrapper(author: Author(id: "ann", name: "Ann"))))
        #expect(error.code == .referenceInEmbeddedValue)
        #expect(error.path == ["wrapped", "author"])
        #expect(error.recordID == CloudRecord.ID(recordName: "h"))
        #expect(error.field == "wrapped")
    }

    @Test func nestedValueInsideAFlattenedValueBecomesAReferenceField() throws {
        var encoder = CKRecordEncoder()
        encoder.nestedValueEncodingStrategy = .flattened(separator: "_")
        try expectRecords(
            of: Holder(wrapped: Wrapper(author: Author(id: "ann", name: "Ann"))), with: encoder,
            equal: [
                record("Author", "ann", ["id": .string("ann"), "name": .string("Ann")]),
                record("Holder", "h", ["wrapped_author": reference("ann")]),
            ])
    }
}
