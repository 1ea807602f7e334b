import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer

/// One SQLite file of records: opened, checked and migrated, with its transactions. What a ``SQLiteCloudDatabase``
/// and each user's database of a ``SQLiteCloudServer`` keep their records in.
final class SQLiteFile: Sendable {
    /// The file's path.
    let path: String
    /// The most tombstones of deleted records the change log keeps.
    let maximumTombstones: Int
    /// The cache of fetched assets' files.
    let assets: AssetFiles
    private let pool: DatabasePool

    /// Opens the file at `path`, creating it if it doesn't exist.
    ///
    /// - Throws: ``SQLiteCloudDatabase/OpenError`` when the file can't be used; the file is left as it was.
    init(path: String, maximumTombstones: Int) throws {
        self.path = path
        self.maximumTombstones = max(0, maximumTombstones)
        self.assets = AssetFiles(directory: URL(fileURLWithPath: path + "-assets"))
        // Earlier builds kept the cache in `<path>.assets/`; it holds only files made again from the database.
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: path + ".assets"))
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        // Writers wait for each other instead of failing, as tasks share the file.
        configuration.busyMode = .timeout(10)
        do {
            // Check the file before anything writes to it: DatabasePool switches a file to WAL mode on open.
            if FileManager.default.fileExists(atPath: path) {
                var readOnly = configuration
                readOnly.readonly = true
                let queue = try DatabaseQueue(path: path, configuration: readOnly)
                try queue.read { try Schema.check($0, path: path) }
                try queue.close()
            }
            pool = try DatabasePool(path: path, configuration: configuration)
            try Schema.prepare(pool, path: path)
            let currentTags = try pool.read { database in
                try Row.fetchAll(
                    database, sql: "SELECT id, change_tag FROM record WHERE id IN (SELECT record_id FROM asset)"
                )
                .reduce(into: [Int64: String]()) { $0[$1[0]] = $1[1] }
            }
            assets.sweep(currentChangeTags: currentTags)
        } catch let error as SQLiteCloudDatabase.OpenError {
            throw error
        } catch let error as DatabaseError
            where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
        {
            throw SQLiteCloudDatabase.OpenError.notADatabase(path: path)
        } catch {
            throw SQLiteCloudDatabase.OpenError.cannotOpen(path: path, underlying: error)
        }
    }

    /// Closes the file. Transactions asked for afterwards fail.
    func close() throws {
        try pool.close()
    }

    // MARK: Transactions

    /// Runs a read transaction on the file's records, mapping SQLite's failures to `CloudDatabaseError`.
    func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteTransaction) throws -> T) async throws -> T {
        let (assets, now) = (assets, Date())
        return try await mappingFailures("reading") {
            try await pool.read {
                try body(try SQLiteTransaction(database: $0, assets: assets, now: now, writing: false))
            }
        }
    }

    /// Runs a write transaction on the file's records: all of it is written, or none; the asset files of the
    /// records it deleted go once it commits.
    func write<T: Sendable>(now: Date, _ body: @escaping @Sendable (inout SQLiteTransaction) throws -> T)
        async throws -> T
    {
        let (assets, maximumTombstones) = (assets, maximumTombstones)
        return try await mappingFailures("writing") {
            try await pool.write { database in
                try Self.transaction(database, assets, maximumTombstones, now: now, body)
            }
        }
    }

    /// A write transaction's body, then what ends it: the change tags stored, the log compacted, and the asset
    /// files of the records it deleted removed once it commits. The removal lists and deletes files, so it runs on
    /// GRDB's writer queue, before the write returns, rather than on the caller's thread of the cooperative pool.
    private static func transaction<T>(
        _ database: Database, _ assets: AssetFiles, _ maximumTombstones: Int, now: Date,
        _ body: (inout SQLiteTransaction) throws -> T
    ) throws -> T {
        var transaction = try SQLiteTransaction(database: database, assets: assets, now: now, writing: true)
        let result = try body(&transaction)
        try transaction.finish(keepingTombstones: maximumTombstones)
        let deletedRows = transaction.deletedRows
        if !deletedRows.isEmpty {
            database.afterNextTransaction(onCommit: { _ in assets.removeFiles(ofRows: deletedRows) })
        }
        return result
    }

    /// Runs a transaction on the file itself, outside the records' rules: stamps, compaction, metadata.
    func writeRaw<T>(_ body: (Database) throws -> T) throws -> T {
        try mappingFailures("writing") { try pool.write(body) }
    }

    /// Deletes the oldest tombstones of deleted records until at most `limit` remain, without blocking the caller's
    /// thread; see ``SQLiteCloudDatabase/compactChangeLog(keepingTombstones:)``.
    func compactChangeLog(keepingTombstones limit: Int) async throws {
        _ = try await mappingFailures("writing") {
            try await pool.write { try SQLiteChangeLog(database: $0).compact(keepingTombstones: limit) }
        }
    }

    /// Reads the file itself, outside the records' rules.
    func readRaw<T>(_ body: (Database) throws -> T) throws -> T {
        try mappingFailures("reading") { try pool.read(body) }
    }

    private func mappingFailures<T>(_ doing: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            throw failure(error, doing)
        }
    }

    private func mappingFailures<T>(_ doing: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as DatabaseError {
            throw failure(error, doing)
        }
    }

    /// SQLite's failure while reading or writing this file, as the error the database answers with.
    private func failure(_ error: DatabaseError, _ doing: String) -> CloudDatabaseError {
        .internalError("SQLite failed \(doing) \(path): \(error.message ?? "\(error.resultCode)")", underlying: error)
    }
}
