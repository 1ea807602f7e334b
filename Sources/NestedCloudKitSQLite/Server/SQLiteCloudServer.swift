import Foundation
import NestedCloudKitCodable
import NestedCloudKitRules
import NestedCloudKitServer

/// Every user's private and shared databases in a directory of SQLite files: a server on which users share records
/// with each other, as CloudKit's, that survives restarts.
///
/// ```swift
/// let server = try SQLiteCloudServer(directory: "Data")
/// let alice = try server.privateDatabase(of: "_alice")
/// let bob = try server.sharedDatabase(of: "_bob")
/// ```
///
/// Each user's private database is a ``SQLiteCloudDatabase`` file, with all of its guarantees, and holds the one
/// copy of their records. A user's shared database is a file too: a copy of what the shares they accepted cover,
/// under the owners' zone names, with change logs of its own. It is brought up to date after every change to a
/// shared zone, whoever makes it, so that losing access shows as deletions since a token, as in CloudKit. A write
/// in a shared database goes to the owner's file, under the shares' permissions, in one transaction with the check.
///
/// The rules are the in-memory server's (`InMemoryCloudDatabase.sharedDatabase(of:)`), from one implementation.
///
/// - **Files.** `private-USER.sqlite` and `shared-USER.sqlite`, the user record name percent-encoded. Each file is
///   marked with its user and scope, so a server opened on the directory again finds them.
/// - **After a crash.** A shared copy is derived from the owners' files: a server opened again brings every one up
///   to date before its first request reads or writes a shared database, so a process killed between an owner's
///   write and the copy's refresh loses nothing.
/// - **Concurrent.** Requests run in parallel; shared copies are refreshed one at a time.
public final class SQLiteCloudServer: Sendable {
    /// The directory of the files.
    public let directory: String

    /// The most items one request may hold, in every user's database.
    public let maximumItemsPerRequest: Int

    let files: SQLiteServerFiles
    let cloudServer: CloudServer<SQLiteStorage>

    /// Opens the server's directory, creating it if it doesn't exist, and brings every shared database up to
    /// date.
    ///
    /// - Parameters:
    ///   - directory: The directory of the files; other files in it are left alone.
    ///   - maximumItemsPerRequest: The per-request limit of every database.
    ///   - maximumTombstones: Each file's bound on tombstones (``SQLiteCloudDatabase/maximumTombstones``).
    ///   - clock: The time stamped on saved records.
    /// - Throws: ``SQLiteCloudDatabase/OpenError`` when a file can't be used.
    public init(
        directory: String, maximumItemsPerRequest: Int = 400, maximumTombstones: Int = 100_000,
        clock: any CloudClock = SystemCloudClock()
    ) throws {
        self.directory = directory
        self.maximumItemsPerRequest = maximumItemsPerRequest
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw SQLiteCloudDatabase.OpenError.cannotOpen(path: directory, underlying: error)
        }
        files = SQLiteServerFiles(directory: directory, maximumTombstones: maximumTombstones)
        cloudServer = CloudServer(
            engine: SQLiteStorage(files: files, clock: clock), maximumItemsPerRequest: maximumItemsPerRequest,
            options: [.sharedDatabases, .earlierRun])
        try files.openExisting()
    }

    /// One user's private database: their own zones and records, and the shares they own.
    public func privateDatabase(of userRecordName: String) throws -> UserDatabase {
        UserDatabase(server: self, userRecordName: userRecordName, scope: .private)
    }

    /// One user's shared database: the zones others share with them, named by their owners
    /// (`CloudRecord.ZoneID(zoneName: "Lists", ownerName: "_alice")`), holding what the shares they accepted
    /// cover.
    ///
    /// Writes go to the owner's database under the user's permission: read-write to change or add a record (a new
    /// one through a parent the share covers), read-only refused with `CloudDatabaseError.permissionFailure(_:)`.
    /// Deleting a share, or a zone, leaves it. No zone can be created, and only database subscriptions saved.
    public func sharedDatabase(of userRecordName: String) throws -> UserDatabase {
        UserDatabase(server: self, userRecordName: userRecordName, scope: .shared)
    }

    /// Deletes a zone of a user's private database as something other than the app would (see
    /// ``SQLiteCloudDatabase/deleteZone(_:reason:)``); the users it was shared with lose it.
    package func deleteZone(
        _ zoneID: CloudRecord.ZoneID, ofUser user: String, reason: CloudZoneDeletion.Reason
    ) async throws {
        try await cloudServer.deleteZone(zoneID, ofUser: user, reason: reason)
    }

    /// Accepts a share as `user`, from the short GUID of its URL (`CloudShare.shortGUID`), as CloudKit Web
    /// Services' `records/accept` does: an invited participant becomes accepted; anyone else joins a public share
    /// as a public user with its public permission. The share's new version is in its owner's database, and what
    /// it covers appears in the user's shared database.
    ///
    /// - Returns: The share as it is once accepted, in the owner's zone as the user's shared database names it.
    /// - Throws: `CloudDatabaseError.invalidArguments(_:)` for a short GUID no share has (a forged or mistyped
    ///   URL) and for the owner accepting their own share; `CloudDatabaseError.permissionFailure(_:)` for a user
    ///   a private share doesn't list.
    public func acceptShare(shortGUID: String, as user: String) async throws -> CloudShare {
        try await cloudServer.acceptShare(shortGUID: shortGUID) { user }
    }

    /// What a share's URL tells `user` before they accept it, from its short GUID, as Web Services'
    /// `records/resolve` and `CKFetchShareMetadataOperation` do.
    ///
    /// - Parameters:
    ///   - shortGUID: The last part of the share's URL.
    ///   - fetchingRootRecord: Whether to include the root record (for a hierarchy share).
    ///   - user: Who asks.
    /// - Throws: `CloudDatabaseError.invalidArguments(_:)` for a short GUID no share has;
    ///   `CloudDatabaseError.permissionFailure(_:)` for a user a private share doesn't list.
    public func shareMetadata(shortGUID: String, fetchingRootRecord: Bool = false, as user: String) async throws
        -> CloudShare.Metadata
    {
        try await cloudServer.shareMetadata(shortGUID: shortGUID, fetchingRootRecord: fetchingRootRecord) { user }
    }

    /// The share with this short GUID, and the user whose database holds it: what a server serving share URLs
    /// looks up.
    package func share(withShortGUID shortGUID: String) async throws -> (owner: String, record: CloudRecord)? {
        try await cloudServer.share(withShortGUID: shortGUID)
    }

    /// Every share a user owns or takes part in (invited, accepted, removed), with its owner: what an admin view of
    /// a user's shares lists.
    package func shares(involving user: String) async throws -> [(owner: String, record: CloudRecord)] {
        try await cloudServer.shares(involving: user)
    }

    /// The databases other users' requests changed since the last call: an owner's private database a participant
    /// wrote to or accepted a share of, a user's shared database that an owner's change (or their own share being
    /// accepted or left) changed. For a server that sends pushes of its own.
    package func takeDatabasesChangedByOthers() -> Set<UserDatabaseID> {
        cloudServer.takeDatabasesChangedByOthers()
    }

    /// Compacts every file's change log down to `limit` tombstones; see
    /// ``SQLiteCloudDatabase/compactChangeLog(keepingTombstones:)``.
    package func compactChangeLogs(keepingTombstones limit: Int) async throws {
        for file in files.all() { try await file.compactChangeLog(keepingTombstones: limit) }
    }

    /// Closes every file. Requests made afterwards fail.
    public func close() async throws {
        try await files.closeAll()
    }
}

extension SQLiteCloudServer: MultiUserCloudServer {
    /// One user's private or shared database; with `fileName`, in that file of the server's directory or elsewhere,
    /// for a server that names its files itself (the emulator's data directory): the file is the user's from then
    /// on, and found again by its mark when the server opens the directory.
    package func database(
        of userRecordName: String, scope: CloudNotification.DatabaseScope, fileName: String?
    ) async throws -> any CloudRecordStoringDatabase & ShareAcceptingDatabase {
        if let fileName { _ = try await files.file(of: userRecordName, scope, path: fileName) }
        return UserDatabase(server: self, userRecordName: userRecordName, scope: scope)
    }

    /// Whether `database` is a user's database on this server.
    package func holds(_ database: any CloudDatabase) -> Bool {
        (database as? UserDatabase)?.server === self
    }

    /// Expires every change token, by compacting away every tombstone a token could still need.
    package func expireEveryChangeToken() async throws {
        try await compactChangeLogs(keepingTombstones: 0)
    }
}
