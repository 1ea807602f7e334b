import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

/// System fields, record names as identifiers, updates without conflicts, and 1.0's data.
@Suite("Identity, updates and migration")
struct IdentityAndMigrationTests {
    struct Note: CKCodable, Identifiable, Equatable {
        var id: String
        var text: String?
        var tags: [String] = []
        var systemFields: CloudRecord.SystemFields?
    }

    @Test func decodeChangeEncodeSaveUpdatesTheServerRecordInsteadOfConflicting() async throws {
        let database = InMemoryCloudDatabase()
        let saved = try await database.saveRecords(
            try CKRecordEncoder().encode(Note(id: "n", text: "first", tags: ["a"])))
        var note = try await CKRecordDecoder().decode(
            Note.self, from: #require(saved.last), referenceDatabase: database)
        #expect(note.systemFields?.changeTag == saved.last?.systemFields?.changeTag)
        #expect(note.systemFields?.changeTag != nil)

        note.text = nil
        note.tags = []
        let updated = try await database.saveRecords(try CKRecordEncoder().encode(note))
        let stored = try await database.record(for: CloudRecord.ID(recordName: "n"))
        #expect(stored.fields == ["id": .string("n")])  // the nil optional and the empty list were cleared
        #expect(stored.systemFields?.changeTag == updated.last?.systemFields?.changeTag)
        #expect(stored.systemFields?.changeTag != note.systemFields?.changeTag)
    }

    @Test func savingAStaleCopyConflictsWithTheServersRecord() async throws {
        let database = InMemoryCloudDatabase()
        let saved = try await database.saveRecords(try CKRecordEncoder().encode(Note(id: "n", text: "first")))
        let stale = try await CKRecordDecoder().decode(
            Note.self, from: #require(saved.last), referenceDatabase: database)
        var fresh = stale
        fresh.text = "second"
        try await database.saveRecords(try CKRecordEncoder().encode(fresh))
        var late = stale
        late.text = "third"
        let error = try await #require(throws: CloudDatabaseError.self) {
            try await database.saveRecords(try CKRecordEncoder().encode(late))
        }
        guard case .serverRecordChanged(let server, _, _) = error.kind else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(server["text"] == .string("second"))
    }

    struct Tagged: CKCodable, Identifiable, Equatable {
        var id: UUID
        var title: String
        func ignoredProperties() -> [String] { ["id"] }
    }

    @Test func identifierNotStoredAsAFieldComesBackFromTheRecordName() async throws {
        let value = Tagged(id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, title: "t")
        let records = try CKRecordEncoder().encode(value)
        #expect(records.last?.fields.names == ["title"])
        #expect(records.last?.id.recordName == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        let (decoded, _) = try await roundTrip(value)
        #expect(decoded == value)
    }

    struct Numbered: CKCodable, Identifiable, Equatable {
        var id: Int
        var name: String
    }

    @Test func integerIdentifierComesBackFromARecordMadeElsewhere() throws {
        let record = CloudRecord(
            recordType: "Numbered", id: CloudRecord.ID(recordName: "42"), fields: ["name": .string("n")])
        #expect(try CKRecordDecoder().decode(Numbered.self, from: record, records: []) == Numbered(id: 42, name: "n"))
    }

    struct LegacySchool: CKCodable, Identifiable, Equatable {
        var id: String
        var location: CloudLocation
        var stops: [CloudLocation]?
    }

    @Test func version1LocationStringsAreReadWhenAsked() throws {
        let record = CloudRecord(
            recordType: "LegacySchool", id: CloudRecord.ID(recordName: "s"),
            fields: [
                "location": .string("-30.0346;-51.2177"), "stops": .stringList(["1.5;2.5"]),
            ])
        var decoder = CKRecordDecoder()
        decoder.locationDecodingStrategy = .acceptingLegacyStrings
        let school = try decoder.decode(LegacySchool.self, from: record, records: [])
        #expect(school.location == CloudLocation(latitude: -30.0346, longitude: -51.2177))
        #expect(school.stops == [CloudLocation(latitude: 1.5, longitude: 2.5)])

        // Without the option, the string is a type mismatch, not a crash.
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(LegacySchool.self, from: record, records: [])
        }
        #expect(error.code == .typeMismatch)
    }

    @Test(arguments: ["", "1;", ";2", "a;b", "1;2;3", "nan;1", "1e999;0"])
    func malformedVersion1LocationIsAnErrorNotACrash(string: String) throws {
        let record = CloudRecord(
            recordType: "LegacySchool", id: CloudRecord.ID(recordName: "s"), fields: ["location": .string(string)])
        var decoder = CKRecordDecoder()
        decoder.locationDecodingStrategy = .acceptingLegacyStrings
        let error = try #require(throws: CKCodableError.self) {
            try decoder.decode(LegacySchool.self, from: record, records: [])
        }
        #expect(error.code == .corruptedValue)
        #expect(error.path == ["location"])
    }
}
