import Foundation
import NestedCloudKitCodable
import Testing

/// CloudKit's schema language, read and written: what `cktool export-schema` writes reads back, and anything
/// else is refused with its line.
@Suite("Schema language")
struct SchemaLanguageTests {
    /// A schema laid out as `cktool export-schema` lays one out, with what an export can hold: every system
    /// field, indexes on some, grants of several permissions, a role, a quoted name, encrypted fields and lists.
    static let exported = """
        DEFINE SCHEMA

            CREATE ROLE Editors;

            RECORD TYPE "List" (
                "___createTime" TIMESTAMP SORTABLE,
                "___createdBy"  REFERENCE QUERYABLE,
                "___etag"       STRING,
                "___modTime"    TIMESTAMP QUERYABLE SORTABLE,
                "___modifiedBy" REFERENCE,
                "___recordID"   REFERENCE QUERYABLE,
                cover           ASSET,
                "grant"         STRING,
                note            ENCRYPTED STRING,
                place           LOCATION QUERYABLE,
                points          LIST<ENCRYPTED DOUBLE>,
                rank            NUMBER PREFERRED AS INT64,
                tags            LIST<STRING> QUERYABLE SEARCHABLE,
                title           STRING QUERYABLE SEARCHABLE SORTABLE,
                GRANT READ, WRITE TO Editors,
                GRANT WRITE TO "_creator",
                GRANT READ, CREATE, WRITE TO "_icloud",
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

        """

    @Test func anExportReadsBackAndIsWrittenTheSame() throws {
        let schema = try CloudSchema(parsing: Self.exported)
        #expect(schema.roles == ["Editors"])
        let list = try #require(schema[recordType: "List"])
        #expect(list.fields["title"] == .init(.init(.string), indexes: [.queryable, .searchable, .sortable]))
        #expect(list.fields["note"] == .init(.init(.string, encrypted: true)))
        #expect(list.fields["points"] == .init(.init(.double, encrypted: true, list: true)))
        #expect(list.fields["rank"] == .init(.init(.number, preferredNumber: .int64)))
        #expect(list.fields["rank"]?.type.valueKind == .int64)
        #expect(list.fields["grant"] == .init(.init(.string)))
        #expect(list.fields["___modTime"]?.indexes == [.queryable, .sortable])
        #expect(list.fields["___etag"] == .init(.init(.string)))
        #expect(
            list.grants == [
                "_creator": [.write], "_icloud": [.read, .create, .write], "Editors": [.read, .write],
                "_world": [.read],
            ])
        #expect(schema.text == Self.exported)
    }

    @Test func keywordsInAnyCaseCommentsAndLooseSpacing() throws {
        let schema = try CloudSchema(
            parsing: """
                // The notes of the app.
                define schema
                  record type Note ( -- one line
                    title string queryable, /* a
                    comment over lines */ tags list < string >,
                    grant read to "_world",
                  );
                """)
        #expect(schema[recordType: "Note"]?.fields["title"] == .init(.init(.string), indexes: .queryable))
        #expect(schema[recordType: "Note"]?.fields["tags"] == .init(.init(.string, list: true)))
        #expect(schema[recordType: "Note"]?.grants == ["_world": [.read]])
        // Every container has Users, whether or not the file says so.
        #expect(schema[recordType: "Users"] == CloudSchema.usersRecordType)
    }

    @Test(arguments: [
        ("RECORD TYPE Note (title STRING);", 1, "expected DEFINE"),
        ("DEFINE SCHEMA\nRECORD TYPE Note (\n  title TEXT\n);", 3, "expected a field type"),
        ("DEFINE SCHEMA\nRECORD TYPE Note (title STRING", 2, "expected )"),
        ("DEFINE SCHEMA\nRECORD TYPE Note (title STRING)\nRECORD TYPE Other (a STRING);", 3, "expected ;"),
        ("DEFINE SCHEMA\nRECORD TYPE \"Note (title STRING);", 2, "never ends"),
        ("DEFINE SCHEMA /* open", 1, "never ends"),
        ("DEFINE SCHEMA\nRECORD TYPE Note (title STRING, GRANT SHARE TO \"_world\");", 2, "READ, CREATE or WRITE"),
        ("DEFINE SCHEMA\nRECORD TYPE Note (title STRING = 1);", 2, "unexpected character"),
    ])
    func textThatIsntTheLanguageIsASyntaxErrorWithItsLine(text: String, line: Int, says: String) throws {
        let error = try #require(throws: CloudSchemaError.self) { try CloudSchema(parsing: text) }
        #expect(error.code == .syntax)
        #expect(error.line == line)
        #expect(error.reason.contains(says), "\(error)")
        #expect(error.recoverySuggestion?.contains("cktool export-schema") == true)
    }

    @Test(
        arguments: [
            ("RECORD TYPE Note (title STRING, title INT64);", "Note", "title", "declared twice"),
            ("RECORD TYPE Note (a STRING); RECORD TYPE Note (b STRING);", "Note", nil, "declared twice"),
            ("RECORD TYPE Note (cover ENCRYPTED ASSET);", "Note", "cover", "assets are always encrypted"),
            ("RECORD TYPE Note (link ENCRYPTED REFERENCE);", "Note", "link", "isn't a type"),
            ("RECORD TYPE Note (secret ENCRYPTED STRING QUERYABLE);", "Note", "secret", "doesn't index encrypted"),
            ("RECORD TYPE Note (count INT64 SEARCHABLE);", "Note", "count", "only strings are searchable"),
            ("RECORD TYPE Note (tags LIST<STRING> SORTABLE);", "Note", "tags", "a list has no order"),
            ("RECORD TYPE Note (rank NUMBER PREFERRED AS STRING);", "Note", "rank", "INT64 or DOUBLE"),
            ("RECORD TYPE Note (\"___recordID\" STRING);", "Note", "___recordID", "system field"),
            ("RECORD TYPE Note (\"has space\" STRING);", "Note", "has space", "letters, digits and underscores"),
            ("RECORD TYPE \"9lives\" (a STRING);", "9lives", nil, "doesn't start with a letter"),
            ("RECORD TYPE Note (a STRING, GRANT READ TO Editors);", "Note", nil, "doesn't create"),
        ] as [(String, String, String?, String)])
    func aDeclarationCloudKitRefusesIsInvalid(entry: String, recordType: String, field: String?, says: String) throws {
        let error = try #require(throws: CloudSchemaError.self) {
            try CloudSchema(parsing: "DEFINE SCHEMA\n" + entry)
        }
        #expect(error.code == .invalidDeclaration)
        #expect(error.recordType == recordType)
        #expect(error.field == field)
        #expect(error.line == 2)
        #expect(error.description.contains(says), "\(error)")
    }

    @Test func namesThatAreWordsOfTheLanguageAreQuoted() throws {
        var type = CloudSchema.RecordType("Type")
        try type.add("type", .init(.init(.string)))
        try type.add("queryable", .init(.init(.int64)))
        try type.add("plain", .init(.init(.int64)))
        let schema = CloudSchema(recordTypes: [type])
        #expect(schema.text.contains("RECORD TYPE \"Type\" ("))
        #expect(schema.text.contains("        \"type\"          STRING,"))
        #expect(schema.text.contains("        \"queryable\"     INT64,"))
        #expect(schema.text.contains("        plain           INT64,"))
        #expect(try CloudSchema(parsing: schema.text) == schema)
    }

    @Test func cloudKitsShareTypeKeepsItsOwnNames() throws {
        let schema = try CloudSchema(
            parsing: """
                DEFINE SCHEMA
                    RECORD TYPE "cloudkit.share" ("cloudkit.title" STRING, "cloudkit.thumbnailImageData" BYTES);
                """)
        #expect(schema[recordType: "cloudkit.share"]?.fields["cloudkit.title"] == .init(.init(.string)))
        #expect(try CloudSchema(parsing: schema.text) == schema)
    }
}
