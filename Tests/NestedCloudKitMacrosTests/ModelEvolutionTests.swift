import Foundation
import NestedCloudKitCodable
import NestedCloudKitMacros
import Testing

/// A model that changes between versions of an app: a property added with a default value reads the records
/// written before it, a renamed property keeps its field, and a layout version is written in each record.
@Suite("Evolving models")
struct ModelEvolutionTests {
    /// Version 1 of a note.
    @CloudRecord
    struct NoteV1: CKCodable, Identifiable, Equatable {
        var id: String
        var title: String
        var cloudKitRecordType: String { "Note" }
    }

    /// Version 2: two properties added with defaults, the title renamed in code and kept in its field.
    @CloudRecord
    struct NoteV2: CKCodable, Identifiable, Equatable {
        var id: String
        @CloudField(name: "title") var heading: String
        var pinned = false
        var tags: [String] = []
        var rank: Int = 3
        var cloudKitRecordType: String { "Note" }
    }

    /// The same as version 2, without the macro: Codable requires the fields its synthesized `init(from:)` reads.
    struct CodableNoteV2: CKCodable, Identifiable, Equatable {
        var id: String
        var title: String
        var pinned = false
        var cloudKitRecordType: String { "Note" }
    }

    /// Version 2, Codable, with the documented way to read records written before `pinned` existed.
    struct EvolvedCodableNote: CKCodable, Identifiable, Equatable {
        var id: String
        var title: String
        var pinned = false
        var cloudKitRecordType: String { "Note" }

        enum CodingKeys: String, CodingKey { case id, title, pinned }

        init(id: String, title: String, pinned: Bool = false) {
            self.id = id
            self.title = title
            self.pinned = pinned
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            title = try container.decode(String.self, forKey: .title)
            pinned = try container.decodeIfPresent(Bool.self, forKey: .pinned) ?? false
        }
    }

    @Test func aPropertyAddedWithADefaultReadsRecordsWrittenBeforeIt() throws {
        let written = try #require(try CKRecordEncoder().encodeRecords(NoteV1(id: "n", title: "Groceries")).last)
        #expect(written.fields.names == ["id", "title"])
        let read = try CKRecordDecoder().decode(NoteV2.self, from: written)
        #expect(read == NoteV2(id: "n", heading: "Groceries", pinned: false, tags: [], rank: 3))
        // Written back, it stores the title in its field and the new values beside it.
        let again = try #require(try CKRecordEncoder().encodeRecords(read).last)
        #expect(
            again.fields == ["id": .string("n"), "title": .string("Groceries"), "pinned": .int64(0), "rank": .int64(3)])
        // A Codable twin reads the new field as its synthesized `init(from:)` does: it must be there.
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(CodableNoteV2.self, from: written)
        }
        #expect(error.field == "pinned")
        // The documented way, decodeIfPresent with the default, reads it.
        #expect(
            try CKRecordDecoder().decode(EvolvedCodableNote.self, from: written)
                == EvolvedCodableNote(id: "n", title: "Groceries"))
    }

    /// A note whose layout changed in a way an older version must not write over.
    struct VersionedNote: CKCodable, Identifiable, Equatable {
        var id: String
        var title: String
        static var cloudKitSchemaVersion: Int { 2 }
    }

    @Test func aTypesLayoutVersionIsWrittenInEachOfItsRecords() throws {
        let record = try #require(try CKRecordEncoder().encodeRecords(VersionedNote(id: "n", title: "t")).last)
        #expect(record[CloudRecord.schemaVersionFieldName] == .int64(2))
        #expect(record.schemaVersion == 2)
        #expect(try CKRecordDecoder().decode(VersionedNote.self, from: record) == VersionedNote(id: "n", title: "t"))
        let unversioned = try #require(try CKRecordEncoder().encodeRecords(NoteV1(id: "n", title: "t")).last)
        #expect(unversioned.schemaVersion == nil)
    }

    @Test func version2DeploysOntoVersion1sSchemaByAddingItsFields() throws {
        let production = try CloudSchema(models: [NoteV1.self])
        let deployment = try CloudSchema(models: [NoteV2.self]).checkDeployable(against: production)
        // The renamed property keeps its field: nothing is refused, nothing retained.
        #expect(deployment.refusals.isEmpty)
        #expect(deployment.retained.isEmpty)
        #expect(
            deployment.additions.map(\.kind) == [
                .fieldAdded(.init(.int64)), .fieldAdded(.init(.int64)), .fieldAdded(.init(.string, list: true)),
            ])
        #expect(deployment.additions.map(\.field) == ["pinned", "rank", "tags"])
        #expect(deployment.schema[recordType: "Note"]?.fields["heading"] == nil)
    }
}
