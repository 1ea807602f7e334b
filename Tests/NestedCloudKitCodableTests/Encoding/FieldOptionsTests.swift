import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

/// A model type's own storage declarations (``CloudFieldOptions``): reference actions, assets, encrypted fields
/// and ignored properties, for that type only, checked so that a misspelt name can't silently do nothing.
@Suite("Per-type field options")
struct FieldOptionsTests {
    struct Person: CKCodable, Identifiable, Equatable {
        var id: String
        var photo: Data
    }

    struct School: CKCodable, Identifiable, Equatable {
        var id: String
        var director: Person
        var students: [Person]
        var logo: Data
        var motto: String
        var cachedRanking: Int?

        static let cloudKitFieldOptions = CloudFieldOptions(
            keyedBy: CodingKeys.self,
            referenceActions: [.director: .validate, .students: .deleteSelf],
            assets: [.logo],
            encrypted: [.motto],
            ignored: [.cachedRanking]
        )
    }

    static let bytes = Data([1, 2, 3])

    static let school = School(
        id: "s", director: Person(id: "d", photo: bytes), students: [Person(id: "p", photo: bytes)], logo: bytes,
        motto: "Per aspera", cachedRanking: 3
    )

    @Test func declaredOptionsApplyToTheirTypeOnly() throws {
        let records = try CKRecordEncoder().encodeRecords(Self.school)
        let root = try #require(records.last)

        #expect(
            root["director"] == .reference(CloudReference(recordID: CloudRecord.ID(recordName: "d"), action: .validate))
        )
        #expect(
            root["students"]
                == .referenceList([CloudReference(recordID: CloudRecord.ID(recordName: "p"), action: .deleteSelf)]))
        #expect(root["logo"] == .asset(CloudAsset(data: Self.bytes)))
        #expect(root["cachedRanking"] == nil)
        #expect(root.encryptedFieldNames == ["motto"])
        #expect(root[encrypted: "motto"] == .string("Per aspera"))
        // A Person's Data field of another name stays Bytes: the options are School's.
        let person = try #require(records.first { $0.id.recordName == "d" })
        #expect(person["photo"] == .bytes(Self.bytes))
        #expect(person.encryptedFieldNames.isEmpty)
    }

    @Test func encodedValuesDecodeBackWithTheirEncryptedFields() async throws {
        let database = InMemoryCloudDatabase()
        let saved = try await database.saveRecords(try CKRecordEncoder().encodeRecords(Self.school))
        #expect(saved.last?.encryptedFieldNames == ["motto"])
        var expected = Self.school
        expected.cachedRanking = nil

        let decoded = try await CKRecordDecoder().decode(School.self, id: "s", from: database)
        #expect(decoded == expected)
        #expect(try await database.record(for: CloudRecord.ID(recordName: "s")).encryptedFieldNames == ["motto"])
    }

    struct SecretReference: CKCodable, Identifiable {
        var id: String
        var friend: Person
        static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, encrypted: [.friend])
    }

    @Test func aReferenceDeclaredEncryptedIsRefused() throws {
        let error = try encodingError(of: SecretReference(id: "r", friend: Person(id: "f", photo: Data())))
        #expect(error.code == .unencryptableValue)
        #expect(error.field == "friend")
        #expect(error.recordID == CloudRecord.ID(recordName: "r"))
    }

    struct TextAsAsset: CKCodable, Identifiable {
        var id: String
        var body: String
        static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, assets: [.body])
    }

    @Test func anAssetFieldHoldingAnythingButAnAssetIsRefusedNamingTheFieldAndTheFix() throws {
        let error = try encodingError(of: TextAsAsset(id: "n", body: "a long text"))
        #expect(error.code == .invalidAssetField)
        #expect(error.field == "body")
        #expect(error.recordID == CloudRecord.ID(recordName: "n"))
        #expect(error.path == ["body"])
        #expect(error.description.contains("Data, file URLs or CloudAssets"))
        // An empty list of assets holds nothing to refuse, and a list of them is a list of assets.
        for scans in [[], [Data([1])]] {
            let record = try #require(try CKRecordEncoder().encodeRecords(Scans(id: "s", scans: scans)).first)
            #expect(record["scans"].map { $0.kind == .assetList || $0.kind.isList } ?? true)
        }
    }

    struct Scans: CKCodable, Identifiable {
        var id: String
        var scans: [Data]
        static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, assets: [.scans])
    }

    struct Misspelt: CKCodable, Identifiable {
        var id: String
        var director: Person
        static let cloudKitFieldOptions = CloudFieldOptions(referenceActions: ["directr": .deleteSelf])
    }

    @Test func aMisspeltNameIsAnErrorNamingIt() throws {
        let error = try encodingError(of: Misspelt(id: "m", director: Person(id: "d", photo: Data())))
        #expect(error.code == .unknownFieldOption)
        #expect(error.field == "directr")
        #expect(error.recordID == CloudRecord.ID(recordName: "m"))
        #expect(error.description.contains("director"))
    }

    struct LegacyMisspelt: CKCodable, Identifiable {
        var id: String
        var director: Person
        func cloudKitReferenceActions() -> [String: CloudReference.Action] { ["directr": .deleteSelf] }
    }

    @Test func aMisspeltNameInVersion1InstanceMethodsIsAnError() throws {
        let error = try encodingError(of: LegacyMisspelt(id: "m", director: Person(id: "d", photo: Data())))
        #expect(error.code == .unknownFieldOption)
    }

    /// A custom `encode(to:)` that leaves a `nil` value's key out: the name is one of its properties, so it isn't
    /// taken for a misspelling.
    struct SkipsNil: CKCodable, Identifiable {
        var id: String
        var mentor: Person?
        enum CodingKeys: String, CodingKey { case id, mentor }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            if let mentor { try container.encode(mentor, forKey: .mentor) }
        }
        func cloudKitReferenceActions() -> [String: CloudReference.Action] { ["mentor": .deleteSelf] }
    }

    @Test func aNameOfAPropertyThatAValueLeftOutIsNotAnError() throws {
        try expectFields(of: SkipsNil(id: "n", mentor: nil), equal: ["id": .string("n")])
    }

    struct BothForms: CKCodable, Identifiable {
        var id: String
        var director: Person
        static let cloudKitFieldOptions = CloudFieldOptions(
            keyedBy: CodingKeys.self, referenceActions: [.director: .validate])
        func cloudKitReferenceActions() -> [String: CloudReference.Action] { ["director": .deleteSelf] }
    }

    @Test func declaredOptionsWinOverVersion1InstanceMethods() throws {
        let root = try #require(
            try CKRecordEncoder().encodeRecords(BothForms(id: "b", director: Person(id: "d", photo: Data()))).last)
        #expect(
            root["director"] == .reference(CloudReference(recordID: CloudRecord.ID(recordName: "d"), action: .validate))
        )
    }
}

/// Decoding a model by its identifier, and a record in hand, without building IDs or passing `records: []`.
@Suite("Decoding call sites")
struct DecodingCallSiteTests {
    struct Note: CKCodable, Identifiable, Equatable {
        var id: UUID
        var text: String
    }

    @Test func aModelDecodesByItsIdentifierFromADatabase() async throws {
        let zone = CloudRecord.ZoneID(zoneName: "Notes")
        let database = InMemoryCloudDatabase()
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        let note = Note(id: UUID(), text: "hello")
        try await database.saveRecords(try CKRecordEncoder(zoneID: zone).encodeRecords(note))

        #expect(try await CKRecordDecoder().decode(Note.self, id: note.id, zoneID: zone, from: database) == note)
        #expect(
            try await CKRecordDecoder().decode(Note.self, recordName: note.id.uuidString, zoneID: zone, from: database)
                == note)
    }

    @Test func aModelWhoseRecordDoesntExistIsMissingRecord() async throws {
        let error = try await #require(throws: CKCodableError.self) {
            try await CKRecordDecoder().decode(Note.self, recordName: "gone", from: InMemoryCloudDatabase())
        }
        #expect(error.code == .missingRecord)
        #expect(error.referencedRecordID == CloudRecord.ID(recordName: "gone"))
        #expect(error.recordID == CloudRecord.ID(recordName: "gone"))
    }

    @Test func aRecordInHandDecodesAlone() throws {
        let note = Note(id: UUID(), text: "hello")
        let record = try #require(try CKRecordEncoder().encodeRecords(note).last)
        #expect(try CKRecordDecoder().decode(Note.self, from: record) == note)
    }
}

/// 128-bit integers map onto CloudKit's 64-bit ones when they fit, and are an error naming the field otherwise.
@Suite("128-bit integers")
struct WideIntegerTests {
    struct Counter: CKCodable, Identifiable, Equatable {
        var id: String
        var signed: Int128
        var unsigned: UInt128
        var optional: Int128?
        var list: [Int128]
    }

    @Test func integersThatFitRoundTrip() throws {
        let counter = Counter(id: "c", signed: -5, unsigned: 7, optional: 9, list: [1, -2])
        try expectFields(
            of: counter,
            equal: [
                "id": .string("c"), "signed": .int64(-5), "unsigned": .int64(7), "optional": .int64(9),
                "list": .int64List([1, -2]),
            ])
        let record = try #require(try CKRecordEncoder().encodeRecords(counter).last)
        #expect(try CKRecordDecoder().decode(Counter.self, from: record) == counter)
    }

    @Test func anIntegerBeyondCloudKitsRangeIsIntegerOverflow() throws {
        let error = try encodingError(
            of: Counter(id: "c", signed: Int128(Int64.max) + 1, unsigned: 0, optional: nil, list: []))
        #expect(error.code == .integerOverflow)
        #expect(error.field == "signed")
        #expect(error.path == ["signed"])
    }
}
