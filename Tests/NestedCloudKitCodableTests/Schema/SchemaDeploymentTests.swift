import Foundation
import NestedCloudKitCodable
import Testing

/// A schema made from the models against the one deployed to production: what CloudKit refuses, what deploying
/// adds, and what stays.
@Suite("Schema deployment")
struct SchemaDeploymentTests {
    static let production = """
        DEFINE SCHEMA
            RECORD TYPE Note (
                "___recordID" REFERENCE QUERYABLE,
                title         STRING QUERYABLE SEARCHABLE,
                color         STRING,
                rank          NUMBER PREFERRED AS INT64,
                size          INT64,
                GRANT WRITE TO "_creator",
                GRANT READ TO "_icloud"
            );
            RECORD TYPE Archive (label STRING);
        """

    struct Note: CKCodable, Identifiable {
        var id: String
        var title: String
        var tint: String
        var rank: Int
        var size: Int
        var pinned: Bool
    }

    struct Tag: CKCodable, Identifiable {
        var id: String
        var name: String
    }

    @Test func whatDeployingAddsAndWhatStays() throws {
        let production = try CloudSchema(parsing: Self.production)
        let models = try CloudSchema(
            models: [Note.self, Tag.self],
            queries: [CloudQuery(recordType: "Note", predicate: .equals(field: "pinned", value: .int64(1)))])
        let deployment = try models.checkDeployable(against: production)
        #expect(deployment.refusals.isEmpty)
        #expect(
            Set(deployment.additions.map(\.kind)) == [
                .recordTypeAdded, .fieldAdded(.init(.string)), .fieldAdded(.init(.int64)), .fieldAdded(.init(.string)),
            ])
        #expect(
            deployment.additions.map { "\($0.recordType).\($0.field ?? "")" }
                == ["Note.id", "Note.pinned", "Note.tint", "Tag."])
        #expect(deployment.additions.allSatisfy { $0.description.contains("deploy") })
        // The query's index on a new field comes with the field.
        #expect(deployment.schema[recordType: "Note"]?.fields["pinned"] == .init(.init(.int64), indexes: .queryable))
        // color is tint renamed, most likely: the message says how to keep the field.
        let color = try #require(deployment.retained.first { $0.field == "color" })
        #expect(color.kind == .fieldRetained(.init(.string)))
        #expect(color.description.contains("@CloudField(name: \"color\")"))
        #expect(deployment.retained.contains { $0.kind == .recordTypeRetained && $0.recordType == "Archive" })
        #expect(
            deployment.retained.contains {
                $0.kind == .indexesRetained([.queryable, .searchable]) && $0.field == "title"
            })
        // The schema to import keeps everything production has, its grants included, and adds the rest.
        let imported = deployment.schema
        #expect(imported[recordType: "Note"]?.fields["color"] == .init(.init(.string)))
        #expect(imported[recordType: "Note"]?.fields["rank"] == .init(.init(.number, preferredNumber: .int64)))
        #expect(imported[recordType: "Note"]?.fields["title"]?.indexes == [.queryable, .searchable])
        #expect(imported[recordType: "Note"]?.grants == ["_creator": [.write], "_icloud": [.read]])
        #expect(imported[recordType: "Archive"] != nil)
        #expect(imported[recordType: "Tag"]?.grants == CloudSchema.RecordType.defaultGrants)
        #expect(try models.checkDeployable(against: imported).isComplete)
    }

    struct RetypedNote: CKCodable, Identifiable {
        var id: String
        var title: String
        var size: Double
        var cloudKitRecordType: String { "Note" }
    }

    struct EncryptedNote: CKCodable, Identifiable {
        var id: String
        var title: String
        static var cloudKitFieldOptions: CloudFieldOptions { CloudFieldOptions(encryptedFields: ["title"]) }
        var cloudKitRecordType: String { "Note" }
    }

    @Test func aDeployedFieldNeverChangesType() throws {
        let production = try CloudSchema(parsing: Self.production)
        let error = try #require(throws: CloudSchemaError.self) {
            try CloudSchema(models: [RetypedNote.self]).checkDeployable(against: production)
        }
        #expect(error.code == .notDeployable)
        #expect(error.refusals.map(\.kind) == [.fieldTypeChanged(deployed: .init(.int64), models: .init(.double))])
        #expect(error.recordType == "Note")
        #expect(error.field == "size")
        #expect(error.description.contains("Note.size is INT64 in production and DOUBLE in the models"))
        #expect(error.description.contains("new field"))

        let encrypted = try CloudSchema(models: [EncryptedNote.self]).deployment(onto: production)
        #expect(
            encrypted.refusals.map(\.kind) == [
                .fieldTypeChanged(deployed: .init(.string), models: .init(.string, encrypted: true))
            ])
        #expect(encrypted.refusals[0].description.contains("encrypting a field included"))
    }

    @Test func aQueryProductionCantServeYetNeedsItsIndexDeployed() throws {
        let production = try CloudSchema(parsing: Self.production)
        let query = CloudQuery(recordType: "Note", predicate: .equals(field: "size", value: .int64(3)))
        #expect(production.missingIndexes(for: query).map(\.description) == ["Note.size QUERYABLE (for EQUALS)"])
        var models = production
        try models.addIndexes(for: query)
        let indexed = models.deployment(onto: production)
        #expect(indexed.additions.map(\.kind) == [.indexesAdded(.queryable)])
        #expect(indexed.additions[0].description.contains("refuses the queries"))
        #expect(indexed.schema.missingIndexes(for: query).isEmpty)
    }
}
