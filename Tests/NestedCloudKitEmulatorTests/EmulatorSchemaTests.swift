import Foundation
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitEmulator

/// The emulator started on a schema, as production: it keeps to the schema with CloudKit's reasons, and its
/// `GET schema` exports the schema in the language it was given in.
@Suite("Emulator: schema")
struct EmulatorSchemaTests {
    struct Note: CKCodable, Identifiable {
        var id: String
        var title: String
        var tags: [String]
        var due: Date?
    }

    static let schema: CloudSchema = {
        do {
            return try CloudSchema(
                models: [Note.self],
                queries: [CloudQuery(recordType: "Note", predicate: .equals(field: "title", value: .string("a")))])
        } catch {
            Issue.record("\(error)")
            return CloudSchema()
        }
    }()

    @Test func aSchemaGivenAtStartIsProductions() async throws {
        let http = EmulatorRouterHarness(EmulatorConfiguration(schema: Self.schema))
        #expect(http.state.configuration.environment == .production)
        let alice = await EmulatorRouterHarness.Session(http, user: "alice")
        func save(_ fields: [String: Any], type: String = "Note") async throws -> String? {
            let answer = try await alice.call(
                "records/modify",
                [
                    "operations": [
                        [
                            "operationType": "create",
                            "record": ["recordName": UUID().uuidString, "recordType": type, "fields": fields],
                        ]
                    ]
                ])
            let result = (answer.json["records"] as? [[String: Any]])?.first
            return result?["reason"] as? String ?? (result?["recordChangeTag"] == nil ? answer.text : nil)
        }
        #expect(
            try await save([
                "title": ["value": "Milk", "type": "STRING"], "tags": ["value": ["a"], "type": "STRING_LIST"],
            ]) == nil)
        #expect(
            try await save(["color": ["value": "red", "type": "STRING"]])
                == "Cannot create new field 'color' in production schema for type 'Note'")
        #expect(
            try await save(["title": ["value": 3, "type": "INT64"]])
                == "invalid attempt to set value type INT64 for field 'title' for type 'Note', defined to be: STRING")
        #expect(try await save([:], type: "Tag") == "Cannot create new type Tag in production schema")

        func query(_ query: [String: Any]) async throws -> EmulatorRouterHarness.Answer {
            try await alice.call("records/query", ["query": query])
        }
        let indexed = try await query([
            "recordType": "Note",
            "filterBy": [["comparator": "EQUALS", "fieldName": "title", "fieldValue": ["value": "Milk"]]],
        ])
        #expect((indexed.json["records"] as? [[String: Any]])?.count == 1, "\(indexed.text)")
        let unindexed = try await query([
            "recordType": "Note",
            "filterBy": [["comparator": "LIST_CONTAINS", "fieldName": "tags", "fieldValue": ["value": "a"]]],
        ])
        #expect(unindexed.json["reason"] as? String == "Field 'tags' is not marked queryable")
        let everything = try await query(["recordType": "Note"])
        #expect(everything.json["reason"] as? String == "Field '___recordID' is not marked queryable")
        let sorted = try await query([
            "recordType": "Note",
            "filterBy": [["comparator": "EQUALS", "fieldName": "title", "fieldValue": ["value": "Milk"]]],
            "sortBy": [["fieldName": "due"]],
        ])
        #expect(sorted.json["reason"] as? String == "Field 'due' is not marked sortable")
        let searched = try await query([
            "recordType": "Note",
            "filterBy": [["comparator": "CONTAINS_ANY_TOKENS", "fieldName": "title", "fieldValue": ["value": "Milk"]]],
        ])
        #expect(searched.json["reason"] as? String == "Field 'title' is not marked searchable")

        // Exported, it is the schema it was given, in the same language.
        let exported = try await http.send("GET", "/emulator/v1/schema?container=\(http.container)")
        #expect(exported.text == Self.schema.text)
    }

    @Test func aSchemaGivenInDevelopmentGrowsAsDevelopmentDoes() async throws {
        let http = EmulatorRouterHarness(EmulatorConfiguration(environment: .development, schema: Self.schema))
        let alice = await EmulatorRouterHarness.Session(http, user: "alice")
        let answer = try await alice.call(
            "records/modify",
            [
                "operations": [
                    [
                        "operationType": "create",
                        "record": [
                            "recordName": "n", "recordType": "Note",
                            "fields": ["color": ["value": "red", "type": "STRING"]],
                        ],
                    ]
                ]
            ])
        #expect((answer.json["records"] as? [[String: Any]])?.first?["recordChangeTag"] != nil, "\(answer.text)")
        let exported = try CloudSchema(
            parsing: try await http.send("GET", "/emulator/v1/schema?container=\(http.container)").text)
        #expect(
            exported[recordType: "Note"]?.fields["color"]
                == .init(.init(.string), indexes: [.queryable, .searchable, .sortable]))
        #expect(exported[recordType: "Note"]?.fields["title"] == Self.schema[recordType: "Note"]?.fields["title"])
        // The models' schema deploys onto what development grew: it only added.
        #expect(try Self.schema.checkDeployable(against: exported).additions.isEmpty)
    }

    @Test func anImportThatIsntASchemaSaysWhereWithA400() async throws {
        let http = EmulatorRouterHarness(EmulatorConfiguration(environment: .production))
        let answer = try await http.send(
            "POST", "/emulator/v1/schema?container=\(http.container)",
            body: Data("DEFINE SCHEMA\n  RECORD TYPE Note (\n    title TEXT\n  );".utf8))
        #expect(answer.status == 400)
        #expect(
            answer.json["reason"] as? String
                == "schema: expected a field type (ASSET, BYTES, DOUBLE, INT64, LOCATION, NUMBER, REFERENCE, STRING, TIMESTAMP, ENCRYPTED or LIST<...>), found TEXT (line 3, record type Note). The schema language is the text `cktool export-schema` writes: DEFINE SCHEMA, then RECORD TYPE Name (field TYPE [QUERYABLE] [SEARCHABLE] [SORTABLE], ..., GRANT ... TO role); entries, and CREATE ROLE name;",
            "\(answer.text)")
    }

    /// The Swift API answers as the HTTP API would: the same code, the same reason.
    @Test func theSwiftAPIsErrorsCarryTheServerErrorCode() throws {
        let emulator = CloudKitEmulator()
        let error = try #require(throws: EmulatorError.self) {
            try emulator.inject(EmulatorFault(serverErrorCode: "NOT_A_CODE"))
        }
        #expect(error.serverErrorCode == "BAD_REQUEST")
        #expect(error.reason.hasPrefix("unknown serverErrorCode NOT_A_CODE: ACCESS_DENIED, ATOMIC_ERROR,"))
    }
}
