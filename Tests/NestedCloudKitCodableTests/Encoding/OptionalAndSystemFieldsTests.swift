import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// Optionals: absent on a new record, cleared on one that exists on the server; system fields kept.
@Suite("Optionals and system fields")
struct OptionalAndSystemFieldsTests {
    struct Note: CKEncodable, Identifiable {
        var id: String
        var title: String?
        var pages: Int?
        var tags: [String] = []
        var systemFields: CloudRecord.SystemFields?
    }

    static let serverFields = CloudRecord.SystemFields(
        changeTag: "tag-7", creationDate: .milliseconds(1000), creatorUserRecordName: "_user",
        modificationDate: .milliseconds(2000), lastModifiedUserRecordName: "_user"
    )

    @Test func presentOptionalsAreStored() throws {
        try expectFields(
            of: Note(id: "n", title: "Hello", pages: 3),
            equal: [
                "id": .string("n"), "title": .string("Hello"), "pages": .int64(3),
            ])
    }

    @Test func nilOptionalsAreLeftOutOfANewRecord() throws {
        let root = try #require(try records(of: Note(id: "n")).last)
        #expect(root.fields == ["id": .string("n")])
        #expect(root.clearedFieldNames.isEmpty)
        #expect(root.systemFields == nil)
    }

    @Test func nilOptionalsAndEmptyListsClearTheFieldsOfARecordThatExists() throws {
        let root = try #require(try records(of: Note(id: "n", pages: 4, systemFields: Self.serverFields)).last)
        #expect(root.fields == ["id": .string("n"), "pages": .int64(4)])
        #expect(root.clearedFieldNames == ["title", "tags"])
    }

    @Test func systemFieldsGoOnTheRecordAndNotInAField() throws {
        let root = try #require(try records(of: Note(id: "n", title: "t", systemFields: Self.serverFields)).last)
        #expect(root.systemFields == Self.serverFields)
        #expect(root.fields.names == ["id", "title"])
    }

    struct CustomNil: CKEncodable {
        var cloudKitIdentifier: String { "c" }
        var systemFields: CloudRecord.SystemFields?
        enum CodingKeys: String, CodingKey { case a, b, systemFields }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(systemFields, forKey: .systemFields)
            try container.encodeNil(forKey: .a)
            try container.encode(Optional<Int>.none, forKey: .b)
        }
    }

    @Test func explicitNilsClearFieldsToo() throws {
        let root = try #require(try records(of: CustomNil(systemFields: Self.serverFields)).last)
        #expect(root.fields.isEmpty)
        #expect(root.clearedFieldNames == ["a", "b"])
        #expect(try records(of: CustomNil()).last?.clearedFieldNames == [])
    }

    @Test func settingNilOnARecordThatExistsRemembersTheFieldToClear() {
        var record = CloudRecord(recordType: "Note", id: CloudRecord.ID(recordName: "n"), fields: ["a": .int64(1)])
        record["a"] = nil
        #expect(record.clearedFieldNames == [])
        record.systemFields = Self.serverFields
        record["a"] = .int64(2)
        record["a"] = nil
        #expect(record.clearedFieldNames == ["a"])
        record["a"] = .int64(3)
        #expect(record.clearedFieldNames == [])
    }
}
