import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer

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
/// - **Change tracking.** Each custom zone keeps a change log in the file, committed with the changes it records:
///   `recordZoneChanges` and `databaseChanges` answer what changed since a token, at a cost proportional to the
///   changes, and the log survives restarts. Tombstones of deleted records are bounded (``maximumTombstones``).
/// - **Concurrent.** Any number of tasks may read and write at once; reads run in parallel, writes one at a time.
/// - **Assets** are stored in the file with their record and deleted with it. A fetched record's assets point to
///   files in a cache folder beside the database (`<path>-assets/`, named as SQLite names its `-wal` file), as
///   CloudKit downloads assets into a cache.
/// - **Safe with other files.** The file is marked as this library's, with a schema version for later
///   migrations; opening a file that isn't a SQLite database, another program's database, or a newer schema
///   throws an ``OpenError`` and leaves the file untouched.
public final class SQLiteCloudDatabase: CloudDatabase, CloudRecordStoringDatabase {
    /// The path of the database file.
    public let path: String

    /// The most items one request may hold; 400 by default, as CloudKit's framework.
    public let maximumItemsPerRequest: Int

    /// The most tombstones of deleted records the change log keeps; older ones are compacted away as records are
    /// deleted, so the file stays bounded, and a token that could miss one of them is expired.
    public let maximumTombstones: Int

    private let pool: DatabasePool
    let assets: AssetFiles
    private let clock: any CloudClock

    /// Opens the database file at `path`, creating it if it doesn't exist.
    ///
    /// - Parameters:
    ///   - path: The file's path.
    ///   - maximumItemsPerRequest: The per-request limit.
    ///   - maximumTombstones: The most tombstones of deleted records the change log keeps (100,000 by default).
    ///   - clock: The time stamped on saved records.
    /// - Throws: ``OpenError`` when the file can't be used; the file is left as it was.
    public init(
        path: String, maximumItemsPerRequest: Int = 400, maximumTombstones: Int = 100_000,
        clock: any CloudClock = SystemCloudClock()
    ) throws {
        self.path = path
        self.maximumItemsPerRequest = maximumItemsPerRequest
        self.maximumTombstones = max(0, maximumTombstones)
        self.clock = clock
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
                let queue = try DatabaseQueue(path: path, configuration: Self.readOnly(configuration))
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
                    results[id] = .failure(try store.missingZoneError(id.zoneID) ?? .unknownItem(id))
                }
            }
            return results
        }
    }

    /// Applies the items of a modify request under CloudKit's rules, as Web Services names them, in one
    /// transaction.
    package func modifyRecords(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError]
    ) async throws -> CloudModifyResults {
        try await modifyRecords(
            operations, atomically: atomically, failing: failures, madeBy: CloudRecord.ZoneID.currentUserOwnerName,
            trackingZoneChanges: false
        ).results
    }

    /// Applies a modify request made by `user`, and returns how it changed each zone too when asked (for a
    /// server's shared copies; empty otherwise).
    func modifyRecords(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError],
        madeBy user: String, trackingZoneChanges: Bool
    ) async throws -> (results: CloudModifyResults, zoneChanges: [CloudRecord.ZoneID: SharedZoneChange]) {
        try checkLimit(operations.count)
        // Asset files are read before the transaction, so the writer never waits on them.
        let files = AssetFileContents(readingFilesOf: operations.compactMap(\.recordToSave))
        let failures = files.failures.merging(failures) { fileFailure, _ in fileFailure }
        return try await modify(trackingZoneChanges: trackingZoneChanges) { _, transaction in
            let results = try transaction.apply(
                operations, atomically: atomically, failing: failures, contents: files.contents, madeBy: user)
            return (results, transaction.zoneChanges)
        }
    }

    /// Runs `body` in a write transaction that applies modify requests under the rules, and removes the asset files
    /// of the records it deleted once it commits.
    ///
    /// - Parameter trackingZoneChanges: Whether the transaction notes how it changes each zone
    ///   (``ModifyTransaction/zoneChanges``), for a server's shared copies.
    func modify<T: Sendable>(
        trackingZoneChanges: Bool = false, _ body: @escaping @Sendable (Database, inout ModifyTransaction) throws -> T
    ) async throws -> T {
        let now = clock.now()
        let assets = assets
        let maximumTombstones = maximumTombstones
        let (result, deletedRows) = try await write { database in
            var transaction = try ModifyTransaction(
                store: SQLiteRecordStore(database: database, assets: assets), now: now,
                tracksZoneChanges: trackingZoneChanges)
            let result = try body(database, &transaction)
            try transaction.finish(keepingTombstones: maximumTombstones)
            return (result, transaction.deletedRows)
        }
        assets.removeFiles(ofRows: deletedRows)
        return result
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
                if let refusal = CloudRequestRules.refusal(creating: zone) {
                    saveResults[zone] = .failure(refusal)
                    continue
                }
                try database.execute(
                    sql: "INSERT OR IGNORE INTO zone (zone_name, owner_name) VALUES (?, ?)",
                    arguments: [zone.zoneName, zone.ownerName])
                if database.changesCount > 0 { try SQLiteChangeLog(database: database).logZoneCreated(zone) }
                saveResults[zone] = .success(())
            }
            for zone in zonesToDelete {
                if zone == .default {
                    deleteResults[zone] = .failure(.invalidArguments("the default zone can't be deleted"))
                    continue
                }
                guard let rows = try Self.deleteZone(zone, reason: .deleted, in: database) else {
                    deleteResults[zone] = .failure(.zoneNotFound(zone))
                    continue
                }
                deletedRows += rows
                deleteResults[zone] = .success(())
            }
            return ((saveResults, deleteResults), deletedRows)
        }
        assets.removeFiles(ofRows: deletedRows)
        return results
    }

    /// Deletes a zone and its records as something other than the app would: the user deleting the app's data in
    /// Settings (`CloudZoneDeletion.Reason.purged`: requests for the zone then fail with
    /// `CloudDatabaseError.userDeletedZone(_:)` until the app creates it again), or an encrypted-data reset. Database
    /// changes report the deletion with its reason. A zone that doesn't exist, or the default zone, is left alone.
    public func deleteZone(_ zoneID: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason) async throws {
        guard zoneID != .default else { return }
        let deletedRows = try await write { database in try Self.deleteZone(zoneID, reason: reason, in: database) }
        assets.removeFiles(ofRows: deletedRows ?? [])
    }

    /// Deletes a zone, its records and their log, and logs the deletion with its reason; returns the rows of the
    /// records deleted, whose asset files go once the transaction commits, or `nil` if the zone doesn't exist.
    private static func deleteZone(
        _ zone: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason, in database: Database
    ) throws -> [Int64]? {
        let rows = try Int64.fetchAll(
            database, sql: "SELECT id FROM record WHERE zone_name = ? AND owner_name = ?",
            arguments: [zone.zoneName, zone.ownerName])
        try database.execute(
            sql: "DELETE FROM zone WHERE zone_name = ? AND owner_name = ?", arguments: [zone.zoneName, zone.ownerName])
        guard database.changesCount > 0 else { return nil }
        try SQLiteChangeLog(database: database).logZoneDeleted(zone, reason: reason)
        return rows
    }

    /// Every zone, sorted by name.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await read { database in
            try Row.fetchAll(database, sql: "SELECT zone_name, owner_name FROM zone ORDER BY zone_name, owner_name")
                .map { CloudRecord.ZoneID(zoneName: $0[0], ownerName: $0[1]) }
        }
    }

    // MARK: Changes since a token

    /// The changes to a custom zone's records since a token, from the file's change log; see
    /// `CloudDatabase.recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)`. A page holds at most
    /// ``maximumItemsPerRequest`` changes; a token older than the zone's compaction horizon (see
    /// ``maximumTombstones``) is expired.
    public func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        let (assets, maximum) = (assets, maximumItemsPerRequest)
        return try await read { database in
            try ChangePages.recordZoneChanges(
                inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit,
                maximum: maximum, in: SQLiteChangeLogReader(database: database, assets: assets))
        }
    }

    /// The zones created, changed and deleted since a token; see `CloudDatabase.databaseChanges(since:resultsLimit:)`.
    public func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws -> CloudDatabaseChanges
    {
        let (assets, maximum) = (assets, maximumItemsPerRequest)
        return try await read { database in
            try ChangePages.databaseChanges(
                since: token, resultsLimit: resultsLimit, maximum: maximum,
                in: SQLiteChangeLogReader(database: database, assets: assets))
        }
    }

    /// Deletes the oldest tombstones of deleted records until at most `limit` remain. Each write already keeps the
    /// file within ``maximumTombstones``; call this to shrink it further. A token that could miss a deletion
    /// compacted away is expired afterwards: its client fetches the zone again from a `nil` token.
    public func compactChangeLog(keepingTombstones limit: Int) async throws {
        _ = try await write { database in try SQLiteChangeLog(database: database).compact(keepingTombstones: limit) }
    }

    // MARK: The user

    /// The file's own user: a record name made when the file was created, the same every time it is opened.
    public func userRecordName() async throws -> String {
        try await read { database in
            try String.fetchOne(database, sql: "SELECT value FROM text_metadata WHERE key = 'user_record_name'")
                ?? "_defaultUser"
        }
    }

    /// Always `CloudAccountStatus.available`: a local file has no account to lose.
    public func accountStatus() async throws -> CloudAccountStatus {
        .available
    }

    // MARK: Subscriptions

    /// Saves and deletes subscriptions in the file. A local database sends no pushes: subscriptions are kept so
    /// that code written for CloudKit runs unchanged, and a client polls instead.
    public func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        try checkLimit(subscriptionsToSave.count + subscriptionIDsToDelete.count)
        return try await write { database in
            var saveResults: [CloudSubscription.ID: Result<CloudSubscription, CloudDatabaseError>] = [:]
            var deleteResults: [CloudSubscription.ID: Result<Void, CloudDatabaseError>] = [:]
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let log = SQLiteChangeLog(database: database)
            for subscription in subscriptionsToSave {
                if let refusal = subscription.refusal {
                    saveResults[subscription.id] = .failure(refusal)
                    continue
                }
                if case .zone(let zoneID) = subscription.kind {
                    if try log.zone(zoneID) == nil {
                        saveResults[subscription.id] = .failure(.zoneNotFound(zoneID))
                        continue
                    }
                }
                let body = String(decoding: try encoder.encode(subscription), as: UTF8.self)
                try database.execute(
                    sql: "INSERT OR REPLACE INTO subscription (id, body) VALUES (?, ?)",
                    arguments: [subscription.id, body])
                saveResults[subscription.id] = .success(subscription)
            }
            for id in subscriptionIDsToDelete {
                try database.execute(sql: "DELETE FROM subscription WHERE id = ?", arguments: [id])
                deleteResults[id] =
                    database.changesCount > 0
                    ? .success(()) : .failure(.unknownSubscription(id))
            }
            return (saveResults, deleteResults)
        }
    }

    /// Every subscription saved in the file, by ID.
    public func allSubscriptions() async throws -> [CloudSubscription] {
        try await read { database in
            let decoder = JSONDecoder()
            return try String.fetchAll(database, sql: "SELECT body FROM subscription ORDER BY id").compactMap {
                // A subscription a newer version wrote in a form this one doesn't read is skipped, not fatal.
                try? decoder.decode(CloudSubscription.self, from: Data($0.utf8))
            }
        }
    }

    // MARK: Requests

    private func checkLimit(_ items: Int) throws {
        guard items <= maximumItemsPerRequest else {
            throw CloudDatabaseError.limitExceeded(limit: maximumItemsPerRequest, requested: items)
        }
    }

    /// One page of a query, from its cursor; see `CloudRecordStoringDatabase`.
    package func queryPage(
        from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        let paging = try CloudQueryPaging(
            from: cursor, resultsLimit: resultsLimit, maximumItemsPerRequest: maximumItemsPerRequest)
        let assets = assets
        return try await read { database in
            let store = SQLiteRecordStore(database: database, assets: assets)
            if let missing = try store.missingZoneError(cursor.zoneID) { throw missing }
            let query = cursor.query
            let matches = try QueryPlanner(store: store).records(matching: query, in: cursor.zoneID)
            let (page, next) = paging.page(of: matches, record: \.record, continuing: cursor)
            return (
                try page.map { match in
                    let record = try store.decode(match.row, id: match.record.id, withAssets: true)
                    return (record.id, .success(record.keepingFields(desiredKeys)))
                }, next
            )
        }
    }

    /// SQLite's failure while reading or writing this file, as the error the database answers with.
    private func failure(_ error: DatabaseError, _ doing: String) -> CloudDatabaseError {
        .internalError("SQLite failed \(doing) \(path): \(error.message ?? "\(error.resultCode)")")
    }

    /// Runs a read transaction, mapping SQLite's failures to ``CloudDatabaseError``.
    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(body)
        } catch let error as CloudDatabaseError {
            throw error
        } catch let error as DatabaseError {
            throw failure(error, "reading")
        }
    }

    /// Runs a read transaction now, blocking the caller: for a server's work that must not be interleaved with
    /// another of its kind (``SQLiteCloudServer`` brings shared databases up to date one at a time).
    func readNow<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try pool.read(body)
        } catch let error as CloudDatabaseError {
            throw error
        } catch let error as DatabaseError {
            throw failure(error, "reading")
        }
    }

    /// Runs a write transaction now, blocking the caller; see ``readNow(_:)``.
    func writeNow<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try pool.write(body)
        } catch let error as CloudDatabaseError {
            throw error
        } catch let error as DatabaseError {
            throw failure(error, "writing")
        }
    }

    /// Runs a write transaction: all of it is written, or none.
    private func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(body)
        } catch let error as CloudDatabaseError {
            throw error
        } catch let error as DatabaseError {
            throw failure(error, "writing")
        }
    }
}

extension SQLiteCloudDatabase: StandaloneCloudDatabase {
    /// Expires every change token, by compacting away every tombstone a token could still need.
    package func expireEveryChangeToken() async throws {
        try await compactChangeLog(keepingTombstones: 0)
    }
}
