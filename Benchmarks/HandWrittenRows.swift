import Foundation
import GRDB

/// The store workloads' strongest baseline: the notes and folders as an expert writes them with plain GRDB by
/// hand, what SQLiteData generates: a table per model, dates as numbers (as the store keeps them), statements
/// prepared once and cached, each row decoded by column index into the model, no `Codable`.
enum HandWrittenRows {
    static let noteColumns = "id, title, body, author, category, isDone, priority, score, created, updated"

    static func createNotes(in db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE hand_note (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL,
                    author TEXT NOT NULL, category TEXT NOT NULL, isDone INTEGER NOT NULL, priority INTEGER NOT NULL,
                    score REAL NOT NULL, created REAL NOT NULL, updated REAL NOT NULL);
                CREATE INDEX hand_note_by_done_and_creation ON hand_note (isDone, created);
                """)
    }

    static func insert(_ note: StoreNote, in db: Database) throws {
        let statement = try db.cachedStatement(
            sql: "INSERT INTO hand_note (\(noteColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        try statement.execute(arguments: [
            note.id, note.title, note.body, note.author, note.category, note.isDone, note.priority, note.score,
            note.created.timeIntervalSince1970, note.updated.timeIntervalSince1970,
        ])
    }

    /// A note from a row of ``noteColumns``, column by column.
    static func note(_ row: Row) -> StoreNote {
        StoreNote(
            id: row[0], title: row[1], body: row[2], author: row[3], category: row[4], isDone: row[5],
            priority: row[6], score: row[7], created: Date(timeIntervalSince1970: row[8]),
            updated: Date(timeIntervalSince1970: row[9]))
    }

    static func notes(_ statement: Statement, arguments: StatementArguments = StatementArguments()) throws
        -> [StoreNote]
    {
        var notes: [StoreNote] = []
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try rows.next() { notes.append(note(row)) }
        return notes
    }

    static func allNotes(_ db: Database) throws -> [StoreNote] {
        try notes(db.cachedStatement(sql: "SELECT \(noteColumns) FROM hand_note ORDER BY id"))
    }

    static func note(id: String, _ db: Database) throws -> StoreNote? {
        try notes(db.cachedStatement(sql: "SELECT \(noteColumns) FROM hand_note WHERE id = ?"), arguments: [id]).first
    }

    /// The screen: the 50 newest open notes.
    static func screen(_ db: Database) throws -> [StoreNote] {
        try notes(
            db.cachedStatement(
                sql: "SELECT \(noteColumns) FROM hand_note WHERE isDone = 0 ORDER BY created DESC LIMIT 50"))
    }

    static func openCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM hand_note WHERE isDone = 0")) ?? 0
    }

    // MARK: The graph

    static func createGraph(in db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE hand_folder (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
                CREATE TABLE hand_file (id TEXT PRIMARY KEY NOT NULL,
                    folderID TEXT NOT NULL REFERENCES hand_folder(id), position INTEGER NOT NULL, name TEXT NOT NULL,
                    size INTEGER NOT NULL);
                CREATE INDEX hand_file_by_folder ON hand_file (folderID, position);
                """)
    }

    static func insert(_ folder: StoreFolder, in db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO hand_folder (id, name) VALUES (?, ?)").execute(arguments: [
            folder.id, folder.name,
        ])
        let file = try db.cachedStatement(
            sql: "INSERT INTO hand_file (id, folderID, position, name, size) VALUES (?, ?, ?, ?, ?)")
        for (position, item) in folder.files.enumerated() {
            try file.execute(arguments: [item.id, folder.id, position, item.name, item.size])
        }
    }

    /// Every folder with its files: two statements, the files grouped by folder as they come, in folder order.
    static func folders(_ db: Database) throws -> [StoreFolder] {
        var files: [String: [StoreFile]] = [:]
        let fileRows = try Row.fetchCursor(
            db.cachedStatement(sql: "SELECT folderID, id, name, size FROM hand_file ORDER BY folderID, position"))
        while let row = try fileRows.next() {
            files[row[0], default: []].append(StoreFile(id: row[1], name: row[2], size: row[3]))
        }
        var folders: [StoreFolder] = []
        let folderRows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT id, name FROM hand_folder ORDER BY id"))
        while let row = try folderRows.next() {
            let id: String = row[0]
            folders.append(StoreFolder(id: id, name: row[1], files: files[id] ?? []))
        }
        return folders
    }
}
