import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

@testable import NestedCloudKitSync

/// Graphs and mapped models read from their record types' tables: each level of a graph from its own table, a
/// mapped model through its generated `init(row:)`, and what can't be read so from the records, giving the same
/// models or the same errors.
@Suite("Store: graphs and mapped models from their tables")
struct StoreTableGraphTests {
    struct Owner: CKCodable, Identifiable, Equatable {
        var id: String
        var name: String
    }

    struct File: CKCodable, Identifiable, Equatable {
        var id: String
        var name: String
        var owner: Owner
    }

    struct Folder: CKCodable, Identifiable, Equatable {
        var id: String
        var name: String
        var files: [File]
        var pinned: File?
    }

    private static func folders() -> [Folder] {
        let ann = Owner(id: "ann", name: "Ann")
        let bob = Owner(id: "bob", name: "Bob")
        let report = File(id: "report", name: "Report", owner: ann)
        return [
            Folder(
                id: "f1", name: "Work",
                files: [report, File(id: "notes", name: "Notes", owner: bob)], pinned: report),
            // No files: CloudKit stores no empty list, so the field is missing, and reads as an empty list.
            Folder(id: "f2", name: "Empty", files: [], pinned: nil),
            Folder(id: "f3", name: "Shared", files: [File(id: "plan", name: "Plan", owner: ann)], pinned: nil),
        ]
    }

    /// Makes every record's bytes unreadable: what still reads, reads the rows alone.
    private static func breakRecords(of store: SyncStore) async throws {
        try await store.write { db in try db.execute(sql: "UPDATE ncs_record SET record = x'00'") }
    }

    @Test func aGraphIsReadFromItsTablesALevelAtATime() async throws {
        let store = try SyncStore.inMemory()
        for folder in Self.folders() { try await store.save(folder) }
        try await Self.breakRecords(of: store)
        #expect(try await store.fetchAll(Folder.self) == Self.folders())
        #expect(try await store.fetch(Folder.self, id: "f1") == Self.folders()[0])
        // A model of the graph's second level, as a root of its own.
        #expect(try await store.fetchAll(File.self).map(\.id) == ["notes", "plan", "report"])
    }

    // MARK: Mapped models

    struct MappedOwner: CKCodable, CloudRecordMappable, CloudRecordRowDecodable, Identifiable, Equatable {
        var id: String
        var name: String

        var cloudKitRecordType: String { "Owner" }

        init(id: String, name: String) {
            (self.id, self.name) = (id, name)
        }

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode(name, forKey: "name")
        }

        init(fields record: CloudRecordReader) throws {
            id = try record.decode(forKey: "id")
            name = try record.decode(forKey: "name")
        }

        // What `@CloudRecord` writes: the reads of `init(fields:)`, from the row.
        init(row: CloudRecordRow) throws {
            id = try row.decode(forKey: "id")
            name = try row.decode(forKey: "name")
        }
    }

    struct MappedFile: CKCodable, CloudRecordMappable, CloudRecordRowDecodable, Identifiable, Equatable {
        var id: String
        var name: String
        var owner: MappedOwner
        var size: Int = 0

        var cloudKitRecordType: String { "File" }

        init(id: String, name: String, owner: MappedOwner) {
            (self.id, self.name, self.owner) = (id, name, owner)
        }

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode(name, forKey: "name")
            try record.encode(owner, forKey: "owner")
            try record.encode(size, forKey: "size")
        }

        init(fields record: CloudRecordReader) throws {
            id = try record.decode(forKey: "id")
            name = try record.decode(forKey: "name")
            owner = try record.decode(forKey: "owner")
            size = try record.decodeIfPresent(forKey: "size") ?? (0)
        }

        init(row: CloudRecordRow) throws {
            id = try row.decode(forKey: "id")
            name = try row.decode(forKey: "name")
            owner = try row.decode(forKey: "owner")
            size = try row.decodeIfPresent(forKey: "size") ?? (0)
        }
    }

    /// A mapping written by hand, without `init(row:)`: read through its own code, from the records.
    struct HandMappedOwner: CKCodable, CloudRecordMappable, Identifiable, Equatable {
        var id: String
        var name: String

        var cloudKitRecordType: String { "Owner" }

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode(name, forKey: "name")
        }

        init(fields record: CloudRecordReader) throws {
            id = try record.decode(forKey: "id")
            name = try record.decode(forKey: "name").uppercased()
        }
    }

    @Test func aMappedModelIsReadThroughItsRowMappingAndAHandWrittenOneFromItsRecord() async throws {
        let store = try SyncStore.inMemory()
        for folder in Self.folders() { try await store.save(folder) }
        #expect(
            try await store.fetchAll(HandMappedOwner.self, recordType: "Owner").map(\.name) == ["ANN", "BOB"])
        #expect(!TableRowReading.mayRead(HandMappedOwner.self, recordType: "Owner"))
        try await Self.breakRecords(of: store)
        // The files were saved without `size`: it takes its initial value, as from a record.
        #expect(
            try await store.fetchAll(MappedFile.self, recordType: "File") == [
                MappedFile(id: "notes", name: "Notes", owner: MappedOwner(id: "bob", name: "Bob")),
                MappedFile(id: "plan", name: "Plan", owner: MappedOwner(id: "ann", name: "Ann")),
                MappedFile(id: "report", name: "Report", owner: MappedOwner(id: "ann", name: "Ann")),
            ])
    }

    // MARK: What rows can't give

    /// A model whose initializer catches what it can't read: a `try?` must not hide the row's fallback.
    struct Forgiving: CKCodable, Identifiable, Equatable {
        var id: String
        var link: URL?
        var files: [File]

        enum CodingKeys: String, CodingKey { case id, link, files }

        init(id: String, link: URL?, files: [File]) {
            (self.id, self.link, self.files) = (id, link, files)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            link = try? container.decode(URL.self, forKey: .link)
            files = (try? container.decode([File].self, forKey: .files)) ?? []
        }
    }

    @Test func aFallbackTheModelCatchesStillReadsTheRecord() async throws {
        let store = try SyncStore.inMemory()
        let file = File(id: "x", name: "X", owner: Owner(id: "o", name: "O"))
        let value = Forgiving(id: "a", link: URL(string: "https://example.com/a"), files: [file])
        try await store.save(value)
        // The reference list, caught on the first read of rows one at a time, makes the read fetch the graph; the
        // URL, which only a record holds, makes it read the record.
        #expect(try await store.fetchAll(Forgiving.self) == [value])
        #expect(try await store.fetch(Forgiving.self, id: "a") == value)
    }

    @Test func aReferencedRowItsColumnsCantGiveMakesTheRootReadItsRecord() async throws {
        let store = try SyncStore.inMemory()
        // GRDB reads text up to a NUL: the owner's row is marked, and its holders are read from their records.
        let odd = Owner(id: "odd", name: "Nul\u{0}name")
        let folders = [
            Folder(id: "a", name: "A", files: [File(id: "f", name: "F", owner: odd)], pinned: nil),
            Folder(
                id: "b", name: "B", files: [File(id: "g", name: "G", owner: Owner(id: "n", name: "N"))], pinned: nil),
        ]
        for folder in folders { try await store.save(folder) }
        #expect(try await store.fetchAll(Folder.self) == folders)
    }

    struct Link: CKCodable, Identifiable, Equatable {
        var id: String
        var next: [Link]
    }

    @Test func aCycleIsTheErrorTheRecordsDecoderGives() async throws {
        let store = try SyncStore.inMemory()
        let zone = store.zoneID
        var a = CloudRecord(recordType: "Link", id: CloudRecord.ID(recordName: "a", zoneID: zone))
        var b = CloudRecord(recordType: "Link", id: CloudRecord.ID(recordName: "b", zoneID: zone))
        a["id"] = .string("a")
        b["id"] = .string("b")
        a["next"] = .referenceList([CloudReference(recordID: b.id)])
        b["next"] = .referenceList([CloudReference(recordID: a.id)])
        try await store.save([a, b])
        let database = InMemoryCloudDatabase()
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        try await database.saveRecords([a, b])
        let expected = try await #require(throws: CKCodableError.self) {
            try await CKRecordDecoder().decode(Link.self, from: a, referenceDatabase: database)
        }
        let error = try await #require(throws: CKCodableError.self) { try await store.fetch(Link.self, id: "a") }
        #expect(error.code == expected.code)
        #expect(error.path == expected.path)
    }

    /// A level's row numbers reach SQLite as one JSON array, written digit by digit: what `json_each` reads back
    /// must be every number, the extremes included.
    @Test func aLevelsRowNumbersAreOneJSONArrayOfEveryNumber() throws {
        let numbers: [Int64] = [0, 7, 10, 1_234_567_890, -1, -42, .max, .min]
        #expect(RowNumbers.json(numbers) == "[" + numbers.map(String.init).joined(separator: ",") + "]")
        #expect(RowNumbers.json([]) == "[]")
        let echoed = try DatabaseQueue().read { db in
            var values: [Int64] = []
            try RowNumbers.forEach(numbers, in: db, sql: { "SELECT * FROM \($0)" }) { row, _ in values.append(row[0]) }
            return values
        }
        #expect(echoed == numbers)
    }
}
