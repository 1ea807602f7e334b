import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import PropertyBased
import TestSupport
import Testing

/// Models with a record mapping (``CloudRecordMappable``) give exactly the records and values their `Codable`
/// twins give, in every combination: mapped or Codable roots and children, field options, strategies, errors.
@Suite("Record mappings")
struct RecordMappingTests {
    typealias Sample = GeneratedModels.Sample
    typealias MappedSample = GeneratedModels.MappedSample
    typealias Child = GeneratedModels.Child
    typealias MappedChild = GeneratedModels.MappedChild

    @Test func aMappedModelGivesTheRecordsOfItsCodableTwin() async {
        await propertyCheck(count: 200, input: GeneratedModels.seeds) { seed in
            var maker = GeneratedModels.Maker(state: seed)
            let sample = maker.sample()
            let codable = try CKRecordEncoder().encodeRecords(sample)
            let mapped = try CKRecordEncoder().encodeRecords(MappedSample(sample))
            #expect(mapped == codable)
            #expect(mapped.map(\.fields.names) == codable.map(\.fields.names), "field order")
        }
    }

    @Test func aMappedModelDecodesTheValueOfItsCodableTwin() async {
        await propertyCheck(count: 200, input: GeneratedModels.seeds) { seed in
            var maker = GeneratedModels.Maker(state: seed)
            let sample = maker.sample()
            let graph = try CKRecordEncoder().encodeGraph(sample)
            #expect(try CKRecordDecoder().decode(MappedSample.self, from: graph) == MappedSample(sample))
        }
    }

    @Test func aMappedModelIsResolvedFromADatabaseAsItsCodableTwinIs() async {
        await propertyCheck(count: 40, input: GeneratedModels.seeds) { seed in
            var maker = GeneratedModels.Maker(state: seed)
            let sample = maker.sample()
            let database = InMemoryCloudDatabase()
            let saved = try await database.saveRecords(try CKRecordEncoder().encodeRecords(MappedSample(sample)))
            let root = try #require(saved.last)
            // Resolving probes the mapping with placeholders to learn which records to fetch, level by level.
            let decoded = try await CKRecordDecoder().decode(MappedSample.self, from: root, referenceDatabase: database)
            #expect(decoded == MappedSample(sample))
        }
    }

    /// A model whose Codable conformance refuses to run: only its mapping can encode or decode it.
    struct MappingOnly: CKCodable, CloudRecordMappable, Identifiable, Equatable {
        struct CodableUsed: Error {}

        var id: String
        var label: String
        var next: [MappingOnly]

        init(id: String, label: String, next: [MappingOnly]) {
            self.id = id
            self.label = label
            self.next = next
        }

        func encode(to encoder: any Encoder) throws { throw CodableUsed() }
        init(from decoder: any Decoder) throws { throw CodableUsed() }

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(label, forKey: "label")
            try record.encode(next, forKey: "next")
        }

        init(fields record: CloudRecordReader) throws {
            id = record.recordID.recordName
            label = try record.decode(String.self, forKey: "label")
            next = try record.decode([MappingOnly].self, forKey: "next")
        }
    }

    @Test func theCodersUseTheMappingForTheRootAndEveryNestedModel() async throws {
        let value = MappingOnly(
            id: "root", label: "r",
            next: [MappingOnly(id: "leaf", label: "l", next: []), MappingOnly(id: "b", label: "b", next: [])])
        let graph = try CKRecordEncoder().encodeGraph(value)
        #expect(graph.root["label"] == .string("r"))
        #expect(graph.records.map(\.id.recordName) == ["leaf", "b", "root"])
        #expect(try CKRecordDecoder().decode(MappingOnly.self, from: graph) == value)
        // Resolving from a database probes the mapping to learn what to fetch; the nested placeholders come from
        // init(from:), which this model refuses, so the decoder follows every reference instead.
        let database = InMemoryCloudDatabase()
        let saved = try await database.saveRecords(graph.records)
        let root = try #require(saved.last)
        #expect(try await CKRecordDecoder().decode(MappingOnly.self, from: root, referenceDatabase: database) == value)
    }

    // MARK: Mixed graphs

    struct CodableParent: CKCodable, Identifiable, Equatable {
        var id: String
        var favorite: MappedChild?
        var kids: [MappedChild]
        var cloudKitRecordType: String { "Parent" }
    }

    struct MappedParent: CKCodable, CloudRecordMappable, Identifiable, Equatable {
        var id: String
        var favorite: Child?
        var kids: [Child]
        var cloudKitRecordType: String { "Parent" }

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encodeIfPresent(favorite, forKey: "favorite")
            try record.encode(kids, forKey: "kids")
        }

        init(fields record: CloudRecordReader) throws {
            id = try record.decode(String.self, forKey: "id")
            favorite = try record.decodeIfPresent(Child.self, forKey: "favorite")
            kids = try record.decode([Child].self, forKey: "kids")
        }

        init(id: String, favorite: Child?, kids: [Child]) {
            self.id = id
            self.favorite = favorite
            self.kids = kids
        }
    }

    static let kids = [Child(id: "a", name: "Ann", score: 3), Child(id: "b", name: "Ben", score: -1)]

    @Test func codableAndMappedModelsNestInsideEachOther() throws {
        let mappedRoot = MappedParent(id: "p", favorite: Self.kids[1], kids: Self.kids)
        let codableRoot = CodableParent(
            id: "p", favorite: MappedChild(Self.kids[1]), kids: Self.kids.map(MappedChild.init))
        let expected = [
            record("Child", "b", ["id": .string("b"), "name": .string("Ben"), "score": .int64(-1)]),
            record("Child", "a", ["id": .string("a"), "name": .string("Ann"), "score": .int64(3)]),
            record(
                "Parent", "p",
                [
                    "id": .string("p"),
                    "favorite": .reference(CloudReference(recordID: CloudRecord.ID(recordName: "b"))),
                    "kids": .referenceList(
                        ["a", "b"].map { CloudReference(recordID: CloudRecord.ID(recordName: $0)) }),
                ]),
        ]
        try expectRecords(of: mappedRoot, equal: expected)
        try expectRecords(of: codableRoot, equal: expected)
        let graph = try CKRecordEncoder().encodeGraph(mappedRoot)
        #expect(try CKRecordDecoder().decode(MappedParent.self, from: graph) == mappedRoot)
        #expect(try CKRecordDecoder().decode(CodableParent.self, from: graph) == codableRoot)
    }

    @Test func aMissingRecordIsNilForAnOptionalAndAnErrorInAList() throws {
        let graph = try CKRecordEncoder().encodeGraph(MappedParent(id: "p", favorite: Self.kids[0], kids: Self.kids))
        let withoutA = graph.records.filter { $0.id.recordName != "a" }
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(MappedParent.self, from: graph.root, records: withoutA)
        }
        #expect(error.code == .missingRecord)
        #expect(error.referencedRecordID == CloudRecord.ID(recordName: "a"))
        #expect(error.path == ["kids", "Index 0"])
        #expect(error.recordID == graph.root.id)
        #expect(error.field == "kids")

        let onlyFavoriteMissing = try CKRecordEncoder().encodeGraph(
            MappedParent(id: "p", favorite: Child(id: "gone", name: "", score: 0), kids: []))
        let decoded = try CKRecordDecoder().decode(
            MappedParent.self, from: onlyFavoriteMissing.root,
            records: onlyFavoriteMissing.records.filter { $0.id.recordName != "gone" })
        #expect(decoded == MappedParent(id: "p", favorite: nil, kids: []))
    }

    // MARK: Field options and strategies

    struct Album: CKCodable, CloudRecordMappable, Identifiable, Equatable {
        var id: String
        var cover: Data
        var notes: String
        var owner: Child
        var cachedCount: Int?

        static let cloudKitFieldOptions = CloudFieldOptions(
            keyedBy: CodingKeys.self, referenceActions: [.owner: .deleteSelf], assets: [.cover], encrypted: [.notes],
            ignored: [.cachedCount])

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode(cover, forKey: "cover")
            try record.encode(notes, forKey: "notes")
            try record.encode(owner, forKey: "owner")
            try record.encodeIfPresent(cachedCount, forKey: "cachedCount")
        }

        init(fields record: CloudRecordReader) throws {
            id = try record.decode(String.self, forKey: "id")
            cover = try record.decode(Data.self, forKey: "cover")
            notes = try record.decode(String.self, forKey: "notes")
            owner = try record.decode(Child.self, forKey: "owner")
            cachedCount = try record.decodeIfPresent(Int.self, forKey: "cachedCount")
        }

        init(id: String, cover: Data, notes: String, owner: Child, cachedCount: Int?) {
            self.id = id
            self.cover = cover
            self.notes = notes
            self.owner = owner
            self.cachedCount = cachedCount
        }
    }

    @Test func fieldOptionsApplyToAMappedModelAsToACodableOne() throws {
        let album = Album(id: "al", cover: Data([7, 8]), notes: "secret", owner: Self.kids[0], cachedCount: 4)
        let root = try #require(try CKRecordEncoder().encodeRecords(album).last)
        #expect(root.fields.names == ["id", "cover", "notes", "owner"])
        #expect(root["cover"] == .asset(CloudAsset(data: Data([7, 8]))))
        #expect(root.encryptedFieldNames == ["notes"])
        #expect(
            root["owner"] == .reference(CloudReference(recordID: CloudRecord.ID(recordName: "a"), action: .deleteSelf)))
        // The Codable path gives the same record.
        let codable = try #require(try CKRecordEncoder().encodeRecords(CodableAlbum(album)).last)
        #expect(root == codable)
    }

    /// ``Album`` without its mapping.
    struct CodableAlbum: CKCodable, Identifiable {
        var id: String
        var cover: Data
        var notes: String
        var owner: Child
        var cachedCount: Int?
        var cloudKitRecordType: String { "Album" }
        static let cloudKitFieldOptions = CloudFieldOptions(
            keyedBy: CodingKeys.self, referenceActions: [.owner: .deleteSelf], assets: [.cover], encrypted: [.notes],
            ignored: [.cachedCount])

        init(_ album: Album) {
            id = album.id
            cover = album.cover
            notes = album.notes
            owner = album.owner
            cachedCount = album.cachedCount
        }
    }

    @Test func aNilClearsTheFieldOfARecordThatExistsOnTheServer() throws {
        struct Note: CKCodable, CloudRecordMappable, Identifiable {
            var id: String
            var title: String?
            var system: CloudRecord.SystemFields?

            func encodeFields(to record: inout CloudRecordWriter) throws {
                try record.encode(id, forKey: "id")
                try record.encodeIfPresent(title, forKey: "title")
                try record.encode(system, forKey: "system")
            }

            init(fields record: CloudRecordReader) throws {
                id = try record.decode(String.self, forKey: "id")
                title = try record.decodeIfPresent(String.self, forKey: "title")
                system = try record.decode(CloudRecord.SystemFields?.self, forKey: "system")
            }

            init(id: String, title: String?, system: CloudRecord.SystemFields?) {
                self.id = id
                self.title = title
                self.system = system
            }
        }
        let system = CloudRecord.SystemFields(changeTag: "t1")
        let root = try #require(try CKRecordEncoder().encodeRecords(Note(id: "n", title: nil, system: system)).last)
        #expect(root.systemFields == system)
        #expect(root.fields.names == ["id"])
        #expect(root.clearedFieldNames == ["title"])
        let decoded = try CKRecordDecoder().decode(Note.self, from: root)
        #expect(decoded.system == system)
        #expect(decoded.title == nil)
    }

    @Test func aMissingOptionalIsNilButAMissingIdIsTheRecordName() throws {
        struct Tagged: CKCodable, CloudRecordMappable, Identifiable {
            var id: String
            var name: String?
            var count: Int?
            var identifier: String?

            func encodeFields(to record: inout CloudRecordWriter) throws {
                try record.encodeIfPresent(name, forKey: "name")
            }

            init(fields record: CloudRecordReader) throws {
                id = try record.decode(String.self, forKey: "id")
                name = try record.decodeIfPresent(String.self, forKey: "name")
                count = try record.decodeIfPresent(Int.self, forKey: "count")
                identifier = try record.decodeIfPresent(String.self, forKey: "id")
            }
        }
        let record = CloudRecord(
            recordType: "Tagged", id: CloudRecord.ID(recordName: "t1"), fields: ["count": .int64(2)])
        let decoded = try CKRecordDecoder().decode(Tagged.self, from: record)
        #expect(decoded.name == nil)
        #expect(decoded.count == 2)
        #expect(decoded.identifier == "t1")
        // A value of another type isn't a missing field: it is an error naming the field.
        let mistyped = CloudRecord(
            recordType: "Tagged", id: CloudRecord.ID(recordName: "t2"), fields: ["name": .int64(3)])
        #expect(throws: CKCodableError.self) { try CKRecordDecoder().decode(Tagged.self, from: mistyped) }
    }

    @Test func theEncodersStrategiesApplyToAMappedModel() throws {
        var encoder = CKRecordEncoder()
        encoder.dataEncodingStrategy = .asset
        encoder.nonFiniteFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        let root = try #require(try encoder.encodeRecords(Measure(id: "m", value: .infinity, raw: Data([1]))).last)
        #expect(root["value"] == .string("+inf"))
        #expect(root["raw"] == .asset(CloudAsset(data: Data([1]))))
    }

    struct Measure: CKCodable, CloudRecordMappable, Identifiable, Equatable {
        var id: String
        var value: Double
        var raw: Data

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode(value, forKey: "value")
            try record.encode(raw, forKey: "raw")
        }

        init(fields record: CloudRecordReader) throws {
            id = try record.decode(String.self, forKey: "id")
            value = try record.decode(Double.self, forKey: "value")
            raw = try record.decode(Data.self, forKey: "raw")
        }

        init(id: String, value: Double, raw: Data) {
            self.id = id
            self.value = value
            self.raw = raw
        }
    }

    // MARK: Errors

    @Test func aNonFiniteNumberNamesItsRecordAndField() throws {
        let error = try encodingError(of: Measure(id: "m", value: .nan, raw: Data()))
        #expect(error.code == .nonFiniteNumber)
        #expect(error.path == ["value"])
        #expect(error.field == "value")
        #expect(error.recordID == CloudRecord.ID(recordName: "m"))
    }

    struct Dated: CKEncodable, CloudRecordEncodable, Identifiable {
        var id: String
        var at: Date

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode(at, forKey: "at")
        }
    }

    @Test func aDateCloudKitCannotStoreNamesItsPathRecordAndField() throws {
        // After a date it can store, so the record's type has a template and the key was written before.
        _ = try CKRecordEncoder().encodeRecords(Dated(id: "fine", at: Date(timeIntervalSince1970: 0)))
        let date = Date(timeIntervalSince1970: 1e13)
        let error = try encodingError(of: Dated(id: "d", at: date))
        #expect(error.code == .dateOutOfRange)
        #expect(error.path == ["at"])
        #expect(error.field == "at")
        #expect(error.recordID == CloudRecord.ID(recordName: "d"))
    }

    struct Twice: CKCodable, CloudRecordEncodable, Identifiable {
        var id: String

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode("again", forKey: "id")
        }
    }

    @Test func aKeyWrittenTwiceIsAnError() throws {
        let error = try encodingError(of: Twice(id: "t"))
        #expect(error.code == .duplicateFieldName)
        #expect(error.path == ["id"])
        #expect(error.recordID == CloudRecord.ID(recordName: "t"))
    }

    struct Address: Codable { var city: String }

    struct TwiceFlattened: CKCodable, CloudRecordEncodable, Identifiable {
        var id: String

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(Address(city: "Lyon"), forKey: "address")
            try record.encode("again", forKey: "address")
        }
    }

    @Test func aKeyWrittenTwiceIsAnErrorAfterAFlattenedValueToo() throws {
        var encoder = CKRecordEncoder()
        encoder.nestedValueEncodingStrategy = .flattened(separator: "_")
        let error = try encodingError(of: TwiceFlattened(id: "t"), with: encoder)
        #expect(error.code == .duplicateFieldName)
        #expect(error.path == ["address"])
    }

    @Test func aMissingOrMistypedFieldNamesItsPathRecordAndField() throws {
        let wrongType = CloudRecord(
            recordType: "Measure", id: CloudRecord.ID(recordName: "m"),
            fields: ["value": .string("high"), "raw": .bytes(Data())])
        let mismatch = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Measure.self, from: wrongType)
        }
        #expect(mismatch.code == .typeMismatch)
        #expect(mismatch.path == ["value"])
        #expect(mismatch.field == "value")
        #expect(mismatch.recordID == wrongType.id)

        let missing = CloudRecord(
            recordType: "Measure", id: CloudRecord.ID(recordName: "m"), fields: ["value": .double(1)])
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Measure.self, from: missing)
        }
        #expect(error.code == .missingField)
        #expect(error.path == ["raw"])
        #expect(error.recordID == missing.id)
    }

    /// Long field names, so that a literal and a name made at run time are the same bytes in different storage.
    struct LongNames: CKCodable, CloudRecordMappable, Identifiable, Equatable {
        static let yearKey = "publicationYearOfTheVolume"
        static let titleKey = "fullTitleOfTheVolumeAsPrinted"
        var id: String
        var year: Int
        var title: String
        /// Writes its keys as copies made at run time, not the literals: the encoder's check of a record against
        /// the last one of its type must compare their bytes.
        var writesCopiedKeys = false

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(year, forKey: writesCopiedKeys ? Self.madeAtRunTime(Self.yearKey) : Self.yearKey)
            try record.encode(title, forKey: writesCopiedKeys ? Self.madeAtRunTime(Self.titleKey) : Self.titleKey)
        }

        init(id: String, year: Int, title: String, writesCopiedKeys: Bool = false) {
            self.id = id
            self.year = year
            self.title = title
            self.writesCopiedKeys = writesCopiedKeys
        }

        init(fields record: CloudRecordReader) throws {
            id = try record.decode(String.self, forKey: "id")
            year = try record.decode(Int.self, forKey: Self.yearKey)
            title = try record.decode(String.self, forKey: Self.titleKey)
        }

        static func madeAtRunTime(_ name: String) -> String { String(decoding: Array(name.utf8), as: UTF8.self) }

        static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.id == rhs.id && lhs.year == rhs.year && lhs.title == rhs.title
        }
    }

    @Test func fieldNamesAreComparedByTheirBytesWhereverTheyAreStored() throws {
        // Names read from a store are made at run time: the same bytes as the model's literals, elsewhere.
        let stored = CloudRecord(
            recordType: "LongNames", id: CloudRecord.ID(recordName: "v1"),
            fields: [
                LongNames.madeAtRunTime(LongNames.titleKey): .string("Ulysses"),
                LongNames.madeAtRunTime(LongNames.yearKey): .int64(1922),
            ])
        #expect(
            try CKRecordDecoder().decode(LongNames.self, from: stored)
                == LongNames(id: "v1", year: 1922, title: "Ulysses"))

        // A name one byte off is another field, however alike the two look.
        let misspelt = CloudRecord(
            recordType: "LongNames", id: CloudRecord.ID(recordName: "v2"),
            fields: ["publicationYearOfTheVolumf": .int64(1922), LongNames.titleKey: .string("Ulysses")])
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(LongNames.self, from: misspelt)
        }
        #expect(error.code == .missingField)

        // Records of one type, the second writing copies of the first's keys: the same fields either way.
        let list = RecordsOfOneTypeTests.Parent(children: [
            LongNames(id: "a", year: 1, title: "A"), LongNames(id: "b", year: 2, title: "B", writesCopiedKeys: true),
        ])
        let records = try CKRecordEncoder().encodeRecords(list)
        #expect(records[0].fields == [LongNames.yearKey: .int64(1), LongNames.titleKey: .string("A")])
        #expect(records[1].fields == [LongNames.yearKey: .int64(2), LongNames.titleKey: .string("B")])
    }

    @Test func aMappedValueReachedTwiceIsOneRecordAndTwoValuesWithOneIDAreAnError() throws {
        // The encoder makes each record in place and drops a repeat once it has compared it with the first.
        let same = RecordsOfOneTypeTests.Parent(children: [
            LongNames(id: "a", year: 1, title: "A"), LongNames(id: "b", year: 2, title: "B"),
            LongNames(id: "a", year: 1, title: "A"),
        ])
        let records = try CKRecordEncoder().encodeRecords(same)
        #expect(records.map(\.id.recordName) == ["a", "b", "parent"])
        #expect(records[0].fields == [LongNames.yearKey: .int64(1), LongNames.titleKey: .string("A")])
        #expect(records[1].fields == [LongNames.yearKey: .int64(2), LongNames.titleKey: .string("B")])

        let conflicting = RecordsOfOneTypeTests.Parent(children: [
            LongNames(id: "a", year: 1, title: "A"), LongNames(id: "a", year: 2, title: "A"),
        ])
        let error = try encodingError(of: conflicting)
        #expect(error.code == .conflictingRecordID)
        #expect(error.path == ["children", "Index 1"])
    }
}
