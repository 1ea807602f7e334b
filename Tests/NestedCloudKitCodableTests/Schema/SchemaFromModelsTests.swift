import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// A schema made from model types: every field the encoder writes, typed as it writes it, and the indexes the
/// queries need.
@Suite("Schema from models")
struct SchemaFromModelsTests {
    enum Priority: String, Codable, CaseIterable { case low, high }

    struct Attachment: CKCodable, Identifiable {
        var id: UUID
        var file: URL
        var preview: Data
        static var cloudKitFieldOptions: CloudFieldOptions {
            CloudFieldOptions(assetFields: ["file"])
        }
    }

    struct Place: Codable {
        var name: String
        var floor: Int?
    }

    /// A folder holds folders (itself, nested) and notes.
    struct Folder: CKCodable, Identifiable {
        var id: String
        var name: String
        var subfolders: [Folder]
        var notes: [Note]
    }

    struct Note: CKCodable, Identifiable {
        var id: String
        var title: String
        var body: String?
        var pinned: Bool
        var rank: Int
        var score: Double
        var due: Date?
        var tags: [String]
        var counts: [Int]
        var link: String
        var priority: Priority
        var place: Place
        var location: CloudLocation?
        var secret: String
        var attachment: Attachment?
        var photos: [CloudAsset]
        static var cloudKitFieldOptions: CloudFieldOptions {
            CloudFieldOptions(encryptedFields: ["secret"])
        }
        static var cloudKitSchemaVersion: Int { 2 }
    }

    @Test func everyFieldTheEncoderWritesWithItsType() throws {
        let schema = try CloudSchema(models: [Folder.self])
        #expect(Set(schema.recordTypes.keys) == ["Folder", "Note", "Attachment", "Users"])
        let note = try #require(schema[recordType: "Note"])
        #expect(
            note.userFields == [
                "title": .init(.init(.string)), "body": .init(.init(.string)), "pinned": .init(.init(.int64)),
                "rank": .init(.init(.int64)), "score": .init(.init(.double)), "due": .init(.init(.timestamp)),
                "tags": .init(.init(.string, list: true)), "counts": .init(.init(.int64, list: true)),
                "link": .init(.init(.string)), "priority": .init(.init(.string)), "place": .init(.init(.string)),
                "location": .init(.init(.location)), "secret": .init(.init(.string, encrypted: true)),
                "attachment": .init(.init(.reference)), "photos": .init(.init(.asset, list: true)),
                "id": .init(.init(.string)), "ncsSchemaVersion": .init(.init(.int64)),
            ])
        #expect(note.grants == CloudSchema.RecordType.defaultGrants)
        #expect(
            schema[recordType: "Folder"]?.userFields == [
                "id": .init(.init(.string)), "name": .init(.init(.string)),
                "subfolders": .init(.init(.reference, list: true)), "notes": .init(.init(.reference, list: true)),
            ])
        #expect(
            schema[recordType: "Attachment"]?.userFields == [
                "id": .init(.init(.string)), "file": .init(.init(.asset)), "preview": .init(.init(.bytes)),
            ])
    }

    @Test func theEncodersStrategiesDecideTheTypes() throws {
        var encoder = CKRecordEncoder()
        encoder.nestedValueEncodingStrategy = .flattened(separator: "_")
        encoder.dataEncodingStrategy = .asset
        let schema = try CloudSchema(models: [Note.self], encoder: encoder)
        let note = try #require(schema[recordType: "Note"])
        #expect(note.fields["place_name"] == .init(.init(.string)))
        #expect(note.fields["place_floor"] == .init(.init(.int64)))
        #expect(note.fields["place"] == nil)
        #expect(schema[recordType: "Attachment"]?.fields["preview"] == .init(.init(.asset)))
    }

    @Test func theTextIsCloudKitsSchemaLanguageAsCktoolWritesIt() throws {
        let schema = try CloudSchema(
            models: [Attachment.self],
            queries: [
                CloudQuery(
                    recordType: "Attachment", predicate: .equals(field: "id", value: .string("a")),
                    sortDescriptors: [.init(.modificationDate, ascending: false)])
            ])
        #expect(
            schema.text == """
                DEFINE SCHEMA

                    RECORD TYPE Attachment (
                        "___createTime" TIMESTAMP,
                        "___createdBy"  REFERENCE,
                        "___etag"       STRING,
                        "___modTime"    TIMESTAMP SORTABLE,
                        "___modifiedBy" REFERENCE,
                        "___recordID"   REFERENCE,
                        file            ASSET,
                        id              STRING QUERYABLE,
                        preview         BYTES,
                        GRANT WRITE TO "_creator",
                        GRANT CREATE TO "_icloud",
                        GRANT READ TO "_world"
                    );

                    RECORD TYPE Users (
                        "___createTime" TIMESTAMP,
                        "___createdBy"  REFERENCE,
                        "___etag"       STRING,
                        "___modTime"    TIMESTAMP,
                        "___modifiedBy" REFERENCE,
                        "___recordID"   REFERENCE,
                        roles           LIST<INT64>,
                        GRANT WRITE TO "_creator",
                        GRANT READ TO "_world"
                    );

                """)
        #expect(try CloudSchema(parsing: schema.text) == schema)
    }

    @Test func queriesGetTheIndexesProductionNeeds() throws {
        let queries = [
            CloudQuery(recordType: "Note", predicate: .compare(field: "title", .beginsWith, .string("a"))),
            CloudQuery(recordType: "Note", predicate: .compare(field: "body", .containsAllTokens, .string("milk"))),
            CloudQuery(
                recordType: "Note", predicate: .compare(field: "due", .lessThan, .date(Date())),
                sortDescriptors: [.init(field: "rank")]),
            CloudQuery(recordType: "Note", predicate: .references(CloudRecord.ID(recordName: "a"), in: "attachment")),
            CloudQuery(
                recordType: "Note",
                predicate: .near(field: "location", location: .init(latitude: 0, longitude: 0), radius: 5)),
            CloudQuery(recordType: "Folder"),
            CloudQuery(recordType: "Folder", predicate: .modified(after: Date())),
        ]
        let schema = try CloudSchema(models: [Folder.self], queries: queries)
        let note = try #require(schema[recordType: "Note"])
        #expect(note.fields["title"]?.indexes == .queryable)
        #expect(note.fields["body"]?.indexes == .searchable)
        #expect(note.fields["due"]?.indexes == [.queryable, .sortable])
        #expect(note.fields["rank"]?.indexes == .sortable)
        #expect(note.fields["attachment"]?.indexes == .queryable)
        #expect(note.fields["location"]?.indexes == .queryable)
        #expect(note.fields["pinned"]?.indexes == [])
        let folder = try #require(schema[recordType: "Folder"])
        #expect(folder.fields["___recordID"]?.indexes == .queryable)
        #expect(folder.fields["___modTime"]?.indexes == [.queryable, .sortable])
        for query in queries { #expect(schema.missingIndexes(for: query).isEmpty) }
        #expect(
            try CloudSchema(models: [Folder.self]).missingIndexes(for: queries[0]).map(\.description)
                == ["Note.title QUERYABLE (for BEGINS_WITH)"])
    }

    @Test func aQueryOnAFieldNoModelWritesIsAMisspelling() throws {
        let error = try #require(throws: CloudSchemaError.self) {
            try CloudSchema(
                models: [Folder.self],
                queries: [CloudQuery(recordType: "Note", predicate: .equals(field: "titel", value: .string("a")))])
        }
        #expect(error.code == .unknownField)
        #expect(error.description.contains("title"))
        let type = try #require(throws: CloudSchemaError.self) {
            try CloudSchema(models: [Folder.self], queries: [CloudQuery(recordType: "Notes")])
        }
        #expect(type.code == .unknownField)
    }

    @Test func anEncryptedFieldCantServeAQuery() throws {
        let error = try #require(throws: CloudSchemaError.self) {
            try CloudSchema(
                models: [Note.self],
                queries: [CloudQuery(recordType: "Note", predicate: .equals(field: "secret", value: .string("a")))])
        }
        #expect(error.code == .invalidDeclaration)
        #expect(error.recordType == "Note")
        #expect(error.field == "secret")
        #expect(error.description.contains("doesn't index encrypted fields"))
    }

    @Test func twoModelsOfOneRecordTypeMustAgreeOnAFieldsType() throws {
        struct First: CKCodable, Identifiable {
            var id: String
            var size: Int
            var cloudKitRecordType: String { "Shared" }
        }
        struct Second: CKCodable, Identifiable {
            var id: String
            var size: String
            var cloudKitRecordType: String { "Shared" }
        }
        let error = try #require(throws: CloudSchemaError.self) { try CloudSchema(models: [First.self, Second.self]) }
        #expect(error.code == .conflictingFieldType)
    }

    @Test func aTypeThatCantBeBuiltSaysWhyAndTakesASample() throws {
        let error = try #require(throws: CloudSchemaError.self) {
            try CloudSchema(models: [GeneratedModels.Sample.self])
        }
        #expect(error.code == .unreadableModel)
        #expect(error.reason.contains("at shape"))
        #expect(error.recoverySuggestion?.contains("samples") == true)
        var maker = GeneratedModels.Maker(state: 1)
        var sample = maker.sample()
        sample.optional = "set"
        sample.child = GeneratedModels.Child(id: "c", name: "n", score: 1)
        let schema = try CloudSchema(models: [GeneratedModels.Sample.self], samples: [sample])
        #expect(schema[recordType: "Sample"]?.fields["shape"] == .init(.init(.string)))
        #expect(schema[recordType: "Sample"]?.fields["child"] == .init(.init(.reference)))
    }

    /// A raw-value enum that isn't CaseIterable: the probe can't guess a raw value.
    enum Mood: String, Codable { case calm, busy }
    struct Diary: CKCodable, Identifiable {
        var id: String
        var mood: Mood
    }

    @Test func aRawValueEnumNeedsToBeCaseIterable() throws {
        let error = try #require(throws: CloudSchemaError.self) { try CloudSchema(models: [Diary.self]) }
        #expect(error.reason.contains("at mood"))
        #expect(error.recoverySuggestion?.contains("CaseIterable") == true)
    }

    /// A URL's field type depends on the value: the encoder writes a file URL as an asset and a web URL as a
    /// string. The probe can't know which the app stores, and a guess would be a schema production refuses.
    struct Download: CKCodable, Identifiable, Equatable {
        var id: String
        var file: URL
        var mirrors: [URL]
    }

    struct Attachments: CKCodable, Identifiable {
        var id: String
        var file: URL
        var pages: [URL]
        var place: Link
        static var cloudKitFieldOptions: CloudFieldOptions { CloudFieldOptions(assetFields: ["file", "pages"]) }
    }

    /// A nested value written as JSON: its URL is part of a string whatever it names.
    struct Link: Codable { var url: URL }

    /// A model that nests `Download`: a sample of it stands in wherever it nests.
    struct Shelf: CKCodable, Identifiable {
        var id: String
        var downloads: [Download]
    }

    @Test func aURLFieldNotDeclaredAnAssetIsRefusedUntilDeclaredOrSampled() throws {
        let error = try #require(throws: CloudSchemaError.self) { try CloudSchema(models: [Download.self]) }
        #expect(error.code == .unreadableModel)
        #expect(error.recordType == "Download")
        #expect(error.field == "file")
        #expect(error.recoverySuggestion?.contains(#"assetFields: ["file"]"#) == true)
        #expect(error.recoverySuggestion?.contains("samples") == true)

        let declared = try CloudSchema(models: [Attachments.self])
        #expect(declared[recordType: "Attachments"]?.fields["file"] == .init(.init(.asset)))
        #expect(declared[recordType: "Attachments"]?.fields["pages"] == .init(.init(.asset, list: true)))
        #expect(declared[recordType: "Attachments"]?.fields["place"] == .init(.init(.string)))

        let sample = Download(
            id: "d", file: URL(fileURLWithPath: "/tmp/report.pdf"), mirrors: [URL(string: "https://example.com/r")!])
        for schema in [
            try CloudSchema(models: [Download.self], samples: [sample]),
            try CloudSchema(models: [Shelf.self], samples: [sample]),
        ] {
            #expect(schema[recordType: "Download"]?.fields["file"] == .init(.init(.asset)))
            #expect(schema[recordType: "Download"]?.fields["mirrors"] == .init(.init(.string, list: true)))
        }
        #expect(throws: CloudSchemaError.self) { try CloudSchema(models: [Shelf.self]) }
    }
}
