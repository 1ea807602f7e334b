import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitSync

/// A flat model of ten fields, as the store keeps it: the `store.*` read workloads.
struct StoreNote: CKCodable, Identifiable, Equatable, Sendable, QueryableModel {
    var id: String
    var title: String
    var body: String
    var author: String
    var category: String
    var isDone: Bool
    var priority: Int
    var score: Double
    var created: Date
    var updated: Date

    enum CodingKeys: String, CodingKey {
        case id, title, body, author, category, isDone, priority, score, created, updated
    }

    // The screen's order, newest first: the index gives it without a sort (ties by record name, ascending).
    static let storeIndexes = [
        StoreIndex(StoreNote.self, on: [.key(.isDone)], sortedBy: [.descending(.created)], named: "openByNewest")
    ]

    static func make(_ index: Int) -> StoreNote {
        StoreNote(
            id: "note-\(index)", title: "Note \(index)", body: "Some text of note \(index), a line or two long.",
            author: "Author \(index % 53)", category: "Category \(index % 7)", isDone: index % 4 == 0,
            priority: index % 5, score: Double(index % 1000) / 8,
            created: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)),
            updated: Date(timeIntervalSince1970: 1_700_000_000 + Double(index * 2)))
    }
}

/// A second flat type, which the `store.save-observed` row's other observers show: a save of a note must not wake
/// them.
struct StoreTag: CKCodable, Identifiable, Equatable, Sendable, QueryableModel {
    var id: String
    var name: String

    enum CodingKeys: String, CodingKey { case id, name }
}

/// The same model as a plain GRDB record: the baseline of every `store.*` workload.
struct PlainNote: Codable, FetchableRecord, PersistableRecord, Equatable, Sendable {
    static let databaseTableName = "note"
    var id: String
    var title: String
    var body: String
    var author: String
    var category: String
    var isDone: Bool
    var priority: Int
    var score: Double
    var created: Date
    var updated: Date

    init(_ note: StoreNote) {
        (id, title, body, author, category) = (note.id, note.title, note.body, note.author, note.category)
        (isDone, priority, score, created, updated) = (
            note.isDone, note.priority, note.score, note.created, note.updated
        )
    }

    static func createTable(in db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE note (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL,
                    author TEXT NOT NULL, category TEXT NOT NULL, isDone INTEGER NOT NULL, priority INTEGER NOT NULL,
                    score REAL NOT NULL, created DATETIME NOT NULL, updated DATETIME NOT NULL);
                CREATE INDEX note_by_done_and_creation ON note (isDone, created);
                """)
    }
}

/// A parent that references its ten children: the `store.fetch-graph` workload.
struct StoreFolder: CKCodable, Identifiable, Equatable, Sendable, QueryableModel {
    var id: String
    var name: String
    var files: [StoreFile]

    enum CodingKeys: String, CodingKey { case id, name, files }

    static func make(_ index: Int) -> StoreFolder {
        StoreFolder(
            id: "folder-\(index)", name: "Folder \(index)",
            files: (0..<10).map { StoreFile(id: "file-\(index)-\($0)", name: "File \($0)", size: index * 10 + $0) })
    }
}

struct StoreFile: CKCodable, Identifiable, Equatable, Sendable {
    var id: String
    var name: String
    var size: Int
}

/// The graph as plain GRDB tables: a parent row, child rows that name their parent.
struct PlainFolder: Codable, FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "folder"
    var id: String
    var name: String
}

struct PlainFile: Codable, FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "file"
    var id: String
    var folderID: String
    var position: Int
    var name: String
    var size: Int
}

// The store's models with record mappings (and the `init(row:)` `@CloudRecord` writes beside them), under the
// same record types, so they read the same records: the `.mapped` store workloads.

/// ``StoreNote`` with a record mapping.
struct MappedStoreNote: CKCodable, CloudRecordMappable, CloudRecordRowDecodable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var body: String
    var author: String
    var category: String
    var isDone: Bool
    var priority: Int
    var score: Double
    var created: Date
    var updated: Date

    var cloudKitRecordType: String { "StoreNote" }

    func encodeFields(to record: inout CloudRecordWriter) throws {
        try record.encode(id, forKey: "id")
        try record.encode(title, forKey: "title")
        try record.encode(body, forKey: "body")
        try record.encode(author, forKey: "author")
        try record.encode(category, forKey: "category")
        try record.encode(isDone, forKey: "isDone")
        try record.encode(priority, forKey: "priority")
        try record.encode(score, forKey: "score")
        try record.encode(created, forKey: "created")
        try record.encode(updated, forKey: "updated")
    }

    init(fields record: CloudRecordReader) throws {
        id = try record.decode(String.self, forKey: "id")
        title = try record.decode(String.self, forKey: "title")
        body = try record.decode(String.self, forKey: "body")
        author = try record.decode(String.self, forKey: "author")
        category = try record.decode(String.self, forKey: "category")
        isDone = try record.decode(Bool.self, forKey: "isDone")
        priority = try record.decode(Int.self, forKey: "priority")
        score = try record.decode(Double.self, forKey: "score")
        created = try record.decode(Date.self, forKey: "created")
        updated = try record.decode(Date.self, forKey: "updated")
    }

    init(row: CloudRecordRow) throws {
        id = try row.decode(forKey: "id")
        title = try row.decode(forKey: "title")
        body = try row.decode(forKey: "body")
        author = try row.decode(forKey: "author")
        category = try row.decode(forKey: "category")
        isDone = try row.decode(forKey: "isDone")
        priority = try row.decode(forKey: "priority")
        score = try row.decode(forKey: "score")
        created = try row.decode(forKey: "created")
        updated = try row.decode(forKey: "updated")
    }
}

/// ``StoreFolder`` with a record mapping.
struct MappedStoreFolder: CKCodable, CloudRecordMappable, CloudRecordRowDecodable, Identifiable, Equatable, Sendable {
    var id: String
    var name: String
    var files: [MappedStoreFile]

    var cloudKitRecordType: String { "StoreFolder" }

    func encodeFields(to record: inout CloudRecordWriter) throws {
        try record.encode(id, forKey: "id")
        try record.encode(name, forKey: "name")
        try record.encode(files, forKey: "files")
    }

    init(fields record: CloudRecordReader) throws {
        id = try record.decode(String.self, forKey: "id")
        name = try record.decode(String.self, forKey: "name")
        files = try record.decode([MappedStoreFile].self, forKey: "files")
    }

    init(row: CloudRecordRow) throws {
        id = try row.decode(forKey: "id")
        name = try row.decode(forKey: "name")
        files = try row.decode(forKey: "files")
    }
}

/// ``StoreFile`` with a record mapping.
struct MappedStoreFile: CKCodable, CloudRecordMappable, CloudRecordRowDecodable, Identifiable, Equatable, Sendable {
    var id: String
    var name: String
    var size: Int

    var cloudKitRecordType: String { "StoreFile" }

    func encodeFields(to record: inout CloudRecordWriter) throws {
        try record.encode(id, forKey: "id")
        try record.encode(name, forKey: "name")
        try record.encode(size, forKey: "size")
    }

    init(fields record: CloudRecordReader) throws {
        id = try record.decode(String.self, forKey: "id")
        name = try record.decode(String.self, forKey: "name")
        size = try record.decode(Int.self, forKey: "size")
    }

    init(row: CloudRecordRow) throws {
        id = try row.decode(forKey: "id")
        name = try row.decode(forKey: "name")
        size = try row.decode(forKey: "size")
    }
}

extension MappedStoreNote {
    init(_ note: StoreNote) {
        (id, title, body, author, category) = (note.id, note.title, note.body, note.author, note.category)
        (isDone, priority, score, created, updated) = (
            note.isDone, note.priority, note.score, note.created, note.updated
        )
    }
}

extension MappedStoreFolder {
    init(_ folder: StoreFolder) {
        (id, name) = (folder.id, folder.name)
        files = folder.files.map { MappedStoreFile(id: $0.id, name: $0.name, size: $0.size) }
    }
}

extension MappedStoreFile {
    init(id: String, name: String, size: Int) {
        (self.id, self.name, self.size) = (id, name, size)
    }
}
