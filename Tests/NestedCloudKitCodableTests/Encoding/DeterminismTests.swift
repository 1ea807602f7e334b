import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// The same value gives the same records, fields and order, every time.
@Suite("Determinism")
struct DeterminismTests {
    struct Tag: CKEncodable, Identifiable, Hashable {
        var id: String
    }

    struct Catalog: CKEncodable, Identifiable {
        var id: String
        var tags: Set<Tag>
        var labels: Set<String>
        var counts: [String: Int]
        var nested: [String: Set<Int>]
    }

    static func catalog() -> Catalog {
        Catalog(
            id: "catalog",
            tags: Set((0..<50).map { Tag(id: "tag-\($0)") }),
            labels: Set((0..<50).map { "label-\($0)" }),
            counts: Dictionary(uniqueKeysWithValues: (0..<50).map { ("k\($0)", $0) }),
            nested: ["a": [3, 1, 2], "b": [9, 8]]
        )
    }

    @Test func sameValueGivesTheSameRecordsFieldsAndOrder() throws {
        let first = try records(of: Self.catalog())
        for _ in 0..<5 {
            // Each copy of a set or dictionary may iterate in another order; the output must not.
            let again = try records(of: Self.catalog())
            #expect(again == first)
            #expect(again.map(\.id) == first.map(\.id))
            #expect(again.map(\.fields.names) == first.map(\.fields.names))
        }
        #expect(first.prefix(3).map(\.id.recordName) == ["tag-0", "tag-1", "tag-10"])
        #expect(first.last?["nested"] == .string(#"{"a":[1,2,3],"b":[8,9]}"#))
    }

    @Test func fieldsFollowThePropertiesDeclarationOrder() throws {
        #expect(
            try records(of: School.example).last?.fields.names == [
                "id", "name", "location", "students", "director", "books",
            ])
    }
}
