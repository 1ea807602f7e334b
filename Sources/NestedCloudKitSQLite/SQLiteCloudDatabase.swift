import Foundation
import GRDB
import NestedCloudKitCodable

/// A `CloudDatabase` in a SQLite file: records that survive restarts, with exactly CloudKit's rules.
///
/// ```swift
/// let database = try SQLiteCloudDatabase(path: "School.sqlite")
/// try await database.saveRecords(try CKRecordEncoder().encode(school))
/// ```
///
/// It keeps the same rules as `InMemoryCloudDatabase` (from the same `CloudModificationPlan`) and passes the
/// same conformance suite: change tags and conflicts, `.deleteSelf` cascades, `.validate`, atomic custom zones,
/// the per-request limit, zones, and queries, with "references this record" answered from an index.
///
/// - **Durable.** The file is in WAL mode and every request is one transaction: a process killed in the middle of
///   a save leaves all of it or none of it. Reopening the file gives back everything.
/// - **Concurrent.** Any number of tasks may read and write at once; reads run in parallel, writes one at a time.
/// - **Assets** are stored in the file with their record and deleted with it. A fetched record's assets point to
///   files in a cache folder beside the database (`<path>.assets/`), as CloudKit downloads assets into a cache.
/// - **Safe with other files.** The file is marked as this library's, with a schema version for later
///   migrations; opening a file that isn't a SQLite database, another program's database, or a newer schema
///   throws an ``OpenError`` and leaves the file untouched.
public final class SQLiteCloudDatabase: CloudDatabase {
    /// The path of the database file.
    public let path: String

    /// The most items one request may hold; 400 by default, as CloudKit's framework.
    public let maximumItemsPerRequest: Int

    private let pool: DatabasePool
    private let assets: AssetFiles
    private let clock: @Sendable () -> Date

    /// Opens the database file at `path`, creating it if it doesn't exist.
    ///
    /// - Parameters:
    ///   - path: The file's path.
    ///   - maximumItemsPerRequest: The per-request limit.
    ///   - clock: The time stamped on saved records.
    /// - Throws: ``OpenError`` when the file can't be used; the file is left as it was.
    public init(
        path: String, maximumItemsPerRequest: Int = 400, clock: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.path = path
        self.maximumItemsPerRequest = maximumItemsPerRequest
        self.clock = clock
        self.assets = AssetFiles(directory: URL(fileURLWithPath: path + ".assets"))
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        // Writers wait for each other instead of failing, as tasks share the file.
        configuration.busyMode = .timeout(10)
        do {
            // Check the file before anything writes to it: DatabasePool switches a file to WAL mode on open.
            if FileManager.default.fileExists(atPath: path) {
                let queue = try DatabaseQueue(path: path, configuration: Self.readOnly(configuration))
                _ = try queue.read { try Schema.check($0, path: path) }
                try queue.close()
            }
            pool = try DatabasePool(path: path, configuration: configuration)
            try pool.write { try Schema.prepare($0, path: path) }
            let currentTags = try pool.read { database in
                try Row.fetchAll(
                    database, sql: "SELECT id, change_tag FROM record WHERE id IN (SELECT record_id FROM asset)"
                )
                .reduce(into: [Int64: String]()) { $0[$1[0]] = $1[1] }
            }
            assets.sweep(currentChangeTags: currentTags)
        } catch let error as OpenError {
            throw error
        } catch let error as DatabaseError
            where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
        {
            throw OpenError.notADatabase(path: path)
        } catch {
            throw OpenError.cannotOpen(path: path, reason: "\(error)")
        }
    }

    private static func readOnly(_ configuration: Configuration) -> Configuration {
        var readOnly = configuration
        readOnly.readonly = true
        return readOnly
    }

    /// Closes the file. Requests made afterwards fail.
    public func close() throws {
        try pool.close()
    }

    // MARK: CloudDatabase

    /// Fetches records by ID; see `CloudDatabase.records(for:desiredKeys:)`.
    public func records(
        for ids: [CloudRecord.ID], desiredKeys: [String]?
    ) async throws -> CloudRecordResults {
        try checkLimit(ids.count)
        let assets = assets
        return try await read { database in
            let store = SQLiteRecordStore(database: database, assets: assets)
            var results: CloudRecordResults = [:]
            for id in ids {
                if let row = try store.storedRecord(withID: id) {
                    results[id] = .success(try store.decode(row, id: id, withAssets: true).keepingFields(desiredKeys))
                } else {
                    results[id] = .failure(
                        try store.containsZone(id.zoneID) ? .unknownItem(id) : .zoneNotFound(id.zoneID))
                }
            }
            return results
        }
    }

    /// Saves and deletes records under CloudKit's rules, in one transaction; see
    /// `CloudDatabase.modifyRecords(saving:deleting:savePolicy:atomically:)`.
    public func modifyRecords(
        saving recordsToSave: [CloudRecord],
        deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy,
        atomically: Bool
    ) async throws -> CloudModifyResults {
        try checkLimit(recordsToSave.count + recordIDsToDelete.count)
        // Asset files are read before the transaction, so the writer never waits on them.
        let files = AssetFileContents(readingFilesOf: recordsToSave)
        let now = clock()
        let assets = assets
        let (results, deletedRows) = try await write { database in
            let store = SQLiteRecordStore(database: database, assets: assets)
            var counter =
                try Int.fetchOne(database, sql: "SELECT value FROM metadata WHERE key = 'change_counter'") ?? 0
            let plan = try CloudModificationPlan(
                saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically,
                store: store, failures: files.failures, now: now
            ) {
                counter += 1
                return String(counter, radix: 36)
            }
            let deletedRows = try store.apply(plan, contents: files.contents)
            try database.execute(
                sql: "UPDATE metadata SET value = ? WHERE key = 'change_counter'", arguments: [counter])
            return ((plan.saveResults, plan.deleteResults), deletedRows)
        }
        assets.removeFiles(ofRows: deletedRows)
        return results
    }

    /// Finds matching records a page at a time; see
    /// `CloudDatabase.records(matching:inZoneWith:desiredKeys:resultsLimit:)`.
    public func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await page(
            from: CloudQuery.Cursor(query: query, zoneID: zoneID, position: "0"), desiredKeys: desiredKeys,
            resultsLimit: resultsLimit)
    }

    /// Continues a query; see `CloudDatabase.records(continuingMatchFrom:desiredKeys:resultsLimit:)`.
    public func records(
        continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await page(from: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    /// Creates and deletes zones; deleting a zone deletes its records.
    public func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults {
        try checkLimit(zonesToSave.count + zonesToDelete.count)
        let (results, deletedRows) = try await write { database in
            var saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
            var deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
            var deletedRows: [Int64] = []
            for zone in zonesToSave {
                if let refusal = CloudModificationPlan.refusal(creating: zone) {
                    saveResults[zone] = .failure(refusal)
                    continue
                }
                try database.execute(
                    sql: "INSERT OR IGNORE INTO zone (zone_name, owner_name) VALUES (?, ?)",
                    arguments: [zone.zoneName, zone.ownerName])
                saveResults[zone] = .success(())
            }
            for zone in zonesToDelete {
                if zone == .default {
                    deleteResults[zone] = .failure(.invalidArguments("the default zone can't be deleted"))
                    continue
                }
                deletedRows += try Int64.fetchAll(
                    database, sql: "SELECT id FROM record WHERE zone_name = ? AND owner_name = ?",
                    arguments: [zone.zoneName, zone.ownerName])
                try database.execute(
                    sql: "DELETE FROM zone WHERE zone_name = ? AND owner_name = ?",
                    arguments: [zone.zoneName, zone.ownerName])
                deleteResults[zone] = database.changesCount > 0 ? .success(()) : .failure(.zoneNotFound(zone))
            }
            return ((saveResults, deleteResults), deletedRows)
        }
        assets.removeFiles(ofRows: deletedRows)
        return results
    }

    /// Every zone, sorted by name.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await read { database in
            try Row.fetchAll(database, sql: "SELECT zone_name, owner_name FROM zone ORDER BY zone_name, owner_name")
                .map { CloudRecord.ZoneID(zoneName: $0[0], ownerName: $0[1]) }
        }
    }

    // MARK: Requests

    private func checkLimit(_ items: Int) throws {
        guard items <= maximumItemsPerRequest else {
            throw CloudDatabaseError.limitExceeded(limit: maximumItemsPerRequest, requested: items)
        }
    }

    private func page(
        from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        guard resultsLimit >= 0 else { throw CloudDatabaseError.invalidArguments("resultsLimit can't be negative") }
        guard let start = Int(cursor.position), start >= 0 else {
            throw CloudDatabaseError.invalidArguments("the cursor wasn't made by this database")
        }
        let limit =
            resultsLimit == CloudQuery.maximumResults
            ? maximumItemsPerRequest : min(resultsLimit, maximumItemsPerRequest)
        let assets = assets
        return try await read { database in
            let store = SQLiteRecordStore(database: database, assets: assets)
            guard try store.containsZone(cursor.zoneID) else { throw CloudDatabaseError.zoneNotFound(cursor.zoneID) }
            let query = cursor.query
            let matches = try QueryPlanner(store: store).records(matching: query, in: cursor.zoneID)
                .sorted { query.sortsBefore($0.record, $1.record) }
            let page = matches.dropFirst(start).prefix(limit)
            let end = start + page.count
            let next =
                end < matches.count
                ? CloudQuery.Cursor(query: query, zoneID: cursor.zoneID, position: String(end)) : nil
            return (
                try page.map { match in
                    let record = try store.decode(match.row, id: match.record.id, withAssets: true)
                    return (record.id, .success(record.keepingFields(desiredKeys)))
                }, next
            )
        }
    }

    /// Runs a read transaction, mapping SQLite's failures to ``CloudDatabaseError``.
    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(body)
        } catch let error as CloudDatabaseError {
            throw error
        } catch let error as DatabaseError {
            throw CloudDatabaseError.internalError(
                "SQLite failed reading \(path): \(error.message ?? "\(error.resultCode)")")
        }
    }

    /// Runs a write transaction: all of it is written, or none.
    private func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(body)
        } catch let error as CloudDatabaseError {
            throw error
        } catch let error as DatabaseError {
            throw CloudDatabaseError.internalError(
                "SQLite failed writing \(path): \(error.message ?? "\(error.resultCode)")")
        }
    }
}
