import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitRules
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
public final class SQLiteCloudDatabase: CloudDatabase, CloudServerFront {
    /// The path of the database file.
    public let path: String

    /// The most items one request may hold; 400 by default, as CloudKit's framework.
    public let maximumItemsPerRequest: Int

    /// The most tombstones of deleted records the change log keeps; older ones are compacted away as records are
    /// deleted, so the file stays bounded, and a token that could miss one of them is expired.
    public let maximumTombstones: Int

    let file: SQLiteFile
    let cloudServer: CloudServer<SQLiteStorage>
    /// The server, as the front sees it.
    package var requests: any CloudServerRequests { cloudServer }
    /// The one database of the file, as the server names it: the current user's private database.
    private let database = UserDatabaseID.privateDatabase(of: CloudRecord.ZoneID.currentUserOwnerName)

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
        file = try SQLiteFile(path: path, maximumTombstones: maximumTombstones)
        self.maximumTombstones = file.maximumTombstones
        cloudServer = CloudServer(
            engine: SQLiteStorage(file: file, clock: clock), maximumItemsPerRequest: maximumItemsPerRequest,
            options: [])
    }

    /// Every request is the file's own user's, in their private database.
    package func serverDatabase() -> UserDatabaseID { database }

    /// Closes the file. Requests made afterwards fail.
    public func close() throws {
        try file.close()
    }

    // MARK: CloudDatabase

    /// Deletes a zone and its records as something other than the app would: the user deleting the app's data in
    /// Settings (`CloudZoneDeletion.Reason.purged`: requests for the zone then fail with
    /// `CloudDatabaseError.userDeletedZone(_:)` until the app creates it again), or an encrypted-data reset. Database
    /// changes report the deletion with its reason. A zone that doesn't exist, or the default zone, is left alone.
    public func deleteZone(_ zoneID: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason) async throws {
        try await cloudServer.deleteZone(zoneID, ofUser: database.userRecordName, reason: reason)
    }

    /// Deletes the oldest tombstones of deleted records until at most `limit` remain. Each write already keeps the
    /// file within ``maximumTombstones``; call this to shrink it further. A token that could miss a deletion
    /// compacted away is expired afterwards: its client fetches the zone again from a `nil` token.
    public func compactChangeLog(keepingTombstones limit: Int) async throws {
        try await file.compactChangeLog(keepingTombstones: limit)
    }

    // MARK: The user

    /// The file's own user: a record name made when the file was created, the same every time it is opened.
    public func userRecordName() async throws -> String {
        try await file.userRecordName()
    }

    /// Always `CloudAccountStatus.available`: a local file has no account to lose.
    public func accountStatus() async throws -> CloudAccountStatus {
        .available
    }
}

extension SQLiteCloudDatabase: StandaloneCloudDatabase {
    /// Expires every change token, by compacting away every tombstone a token could still need.
    package func expireEveryChangeToken() async throws {
        try await compactChangeLog(keepingTombstones: 0)
    }
}
