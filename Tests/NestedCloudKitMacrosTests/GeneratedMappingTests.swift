import Foundation
import NestedCloudKitCodable
import NestedCloudKitMacros
import PropertyBased
import Testing

/// Models whose mapping `@CloudRecord` wrote give exactly the records and values of their Codable twins.
@Suite("Generated mappings")
struct GeneratedMappingTests {
    enum Mood: String, Codable, Equatable { case calm, busy }

    struct Metadata: Codable, Equatable {
        var source: String
        var weights: [Double]
    }

    @CloudRecord
    struct Task: CKCodable, Identifiable, Equatable {
        var id: String
        var title: String
        var done: Bool
        var priority: Int
        var estimate: Double?
        var due: Date?
        var attachment: Data
        var tags: [String]
        var mood: Mood
        var metadata: Metadata
        var link: URL?
        var place: CloudLocation?
        var owner: Person
        var helpers: [Person]
        var reviewer: Person?
        var system: CloudRecord.SystemFields?

        static let cloudKitFieldOptions = CloudFieldOptions(
            keyedBy: CodingKeys.self, referenceActions: [.helpers: .deleteSelf], assets: [.attachment],
            encrypted: [.title])
    }

    @CloudRecord
    struct Person: CKCodable, Identifiable, Equatable {
        var id: String
        var name: String
        var nickname: String?

        enum CodingKeys: String, CodingKey {
            case id
            case name = "full_name"
        }

        init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// ``Task`` without its mapping, under the same record type.
    struct CodableTask: CKCodable, Identifiable {
        var id: String
        var title: String
        var done: Bool
        var priority: Int
        var estimate: Double?
        var due: Date?
        var attachment: Data
        var tags: [String]
        var mood: Mood
        var metadata: Metadata
        var link: URL?
        var place: CloudLocation?
        var owner: CodablePerson
        var helpers: [CodablePerson]
        var reviewer: CodablePerson?
        var system: CloudRecord.SystemFields?

        var cloudKitRecordType: String { "Task" }
        static let cloudKitFieldOptions = CloudFieldOptions(
            keyedBy: CodingKeys.self, referenceActions: [.helpers: .deleteSelf], assets: [.attachment],
            encrypted: [.title])
    }

    struct CodablePerson: CKCodable, Identifiable {
        var id: String
        var name: String
        var nickname: String?
        var cloudKitRecordType: String { "Person" }

        enum CodingKeys: String, CodingKey {
            case id
            case name = "full_name"
        }

        init(_ person: Person) {
            id = person.id
            name = person.name
        }
    }

    struct Maker {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
        mutating func bool() -> Bool { next() % 2 == 0 }
        mutating func text() -> String { String((0..<int(0...10)).map { _ in Array("abé漢👋\"\\ 0")[int(0...8)] }) }

        mutating func person(_ prefix: String) -> Person { Person(id: "\(prefix)-\(int(0...999))", name: text()) }

        mutating func task() -> Task {
            let owner = person("owner")
            return Task(
                id: "task-\(int(0...9999))", title: text(), done: bool(), priority: int(-5...5),
                estimate: bool() ? Double(int(0...1000)) / 8 : nil,
                due: bool() ? Date(timeIntervalSince1970: Double(int(0...2_000_000_000))) : nil,
                attachment: Data((0..<int(0...16)).map { _ in UInt8(truncatingIfNeeded: next()) }),
                tags: (0..<int(0...4)).map { _ in text() }, mood: bool() ? .calm : .busy,
                metadata: Metadata(source: text(), weights: (0..<int(0...3)).map { _ in Double(int(-9...9)) }),
                link: bool() ? URL(string: "https://example.com/\(int(0...99))") : nil,
                place: bool()
                    ? CloudLocation(latitude: Double(int(-90...90)), longitude: Double(int(-180...180))) : nil,
                owner: owner,
                helpers: (0..<int(0...3)).map { index in Person(id: "helper-\(index)", name: text()) },
                reviewer: bool() ? person("reviewer") : nil,
                system: bool() ? CloudRecord.SystemFields(changeTag: "tag-\(int(0...9))") : nil)
        }
    }

    static let seeds = Gen.uint64()

    @Test func generatedMappingsGiveTheRecordsAndValuesOfTheCodablePath() async {
        await propertyCheck(count: 200, input: Self.seeds) { seed in
            var maker = Maker(state: seed)
            let task = maker.task()
            let twin = CodableTask(
                id: task.id, title: task.title, done: task.done, priority: task.priority, estimate: task.estimate,
                due: task.due, attachment: task.attachment, tags: task.tags, mood: task.mood, metadata: task.metadata,
                link: task.link, place: task.place, owner: CodablePerson(task.owner),
                helpers: task.helpers.map(CodablePerson.init), reviewer: task.reviewer.map(CodablePerson.init),
                system: task.system)
            let mapped = try CKRecordEncoder().encodeRecords(task)
            let codable = try CKRecordEncoder().encodeRecords(twin)
            #expect(mapped == codable)
            #expect(mapped.map(\.fields.names) == codable.map(\.fields.names), "field order")
            #expect(mapped.map(\.clearedFieldNames) == codable.map(\.clearedFieldNames), "cleared fields")
            let root = try #require(mapped.last)
            #expect(try CKRecordDecoder().decode(Task.self, from: root, records: mapped) == task)
        }
    }

    @CloudRecord
    struct Reordered: CKCodable, Identifiable, Equatable {
        var id: String
        var first: String?
        var second: String?
        var system: CloudRecord.SystemFields?

        enum CodingKeys: String, CodingKey { case system, second, id, first }
    }

    struct CodableReordered: CKCodable, Identifiable {
        var id: String
        var first: String?
        var second: String?
        var system: CloudRecord.SystemFields?
        var cloudKitRecordType: String { "Reordered" }

        enum CodingKeys: String, CodingKey { case system, second, id, first }
    }

    @Test func fieldsComeInTheOrderOfTheCodingKeysAsCodableWritesThem() throws {
        let system = CloudRecord.SystemFields(changeTag: "t")
        let mapped = try #require(
            try CKRecordEncoder().encodeRecords(Reordered(id: "r", first: nil, second: nil, system: system)).last)
        let codable = try #require(
            try CKRecordEncoder().encodeRecords(CodableReordered(id: "r", first: nil, second: nil, system: system)).last
        )
        #expect(mapped.clearedFieldNames == ["second", "first"])
        #expect(mapped == codable)
        #expect(mapped.clearedFieldNames == codable.clearedFieldNames)
    }

    @Test func codingKeysRenameTheFieldsOfAGeneratedMapping() throws {
        let records = try CKRecordEncoder().encodeRecords(Person(id: "p", name: "Ada Lovelace"))
        let record = try #require(records.last)
        #expect(record.fields.names == ["id", "full_name"])
        #expect(record["full_name"] == .string("Ada Lovelace"))
    }

    // MARK: Property attributes

    @CloudRecord
    struct Album: CKCodable, Identifiable, Equatable {
        var id: String
        @CloudField(name: "title") var name: String
        @CloudField(reference: .deleteSelf) var owner: Person
        @CloudField(asset: true) var cover: Data
        @CloudField(encrypted: true) var notes: String
        @CloudIgnored var isExpanded = false
    }

    /// ``Album`` with its names and options written by hand, through Codable only.
    struct CodableAlbum: CKCodable, Identifiable {
        var id: String
        var name: String
        var owner: Person
        var cover: Data
        var notes: String
        var isExpanded = false
        var cloudKitRecordType: String { "Album" }

        enum CodingKeys: String, CodingKey {
            case id
            case name = "title"
            case owner, cover, notes
        }

        static let cloudKitFieldOptions = CloudFieldOptions(
            keyedBy: CodingKeys.self, referenceActions: [.owner: .deleteSelf], assets: [.cover],
            encrypted: [.notes])
    }

    @Test func propertyAttributesGiveTheRecordsOfNamesAndOptionsWrittenByHand() throws {
        let owner = Person(id: "ada", name: "Ada Lovelace")
        let album = Album(
            id: "summer", name: "Summer", owner: owner, cover: Data([1, 2, 3]), notes: "private", isExpanded: true)
        let records = try CKRecordEncoder().encodeRecords(album)
        let codable = try CKRecordEncoder().encodeRecords(
            CodableAlbum(
                id: "summer", name: "Summer", owner: owner, cover: Data([1, 2, 3]), notes: "private",
                isExpanded: true))
        #expect(records == codable)
        let root = try #require(records.last)
        #expect(root.fields.names == ["id", "title", "owner", "cover", "notes"])
        #expect(
            root["owner"]
                == .reference(CloudReference(recordID: CloudRecord.ID(recordName: "ada"), action: .deleteSelf)))
        guard case .asset(let cover)? = root["cover"] else {
            Issue.record("cover isn't an asset: \(String(describing: root["cover"]))")
            return
        }
        #expect(cover.data == Data([1, 2, 3]))
        #expect(root.encryptedFieldNames == ["notes"])
        // Both paths read the record back the same way; the ignored property keeps its initial value.
        let graph = try CKRecordEncoder().encodeGraph(album)
        var expected = album
        expected.isExpanded = false
        #expect(try CKRecordDecoder().decode(Album.self, from: graph) == expected)
        // The CodingKeys the macro wrote are the Codable conformance's too.
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(album)) as? [String: Any]
        #expect(json?["title"] as? String == "Summer")
        #expect(json?["isExpanded"] == nil)
    }
}
