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
    /// The server, as every user's database sees it.
    package var requests: any CloudServerRequests { cloudServer }

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
    public func privateDatabase(of userRecordName: String) throws -> UserCloudDatabase {
        UserCloudDatabase(server: self, userRecordName: userRecordName, scope: .private)
    }

    /// One user's shared database: the zones others share with them, named by their owners
    /// (`CloudRecord.ZoneID(zoneName: "Lists", ownerName: "_alice")`), holding what the shares they accepted
    /// cover.
    ///
    /// Writes go to the owner's database under the user's permission: read-write to change or add a record (a new
    /// one through a parent the share covers), read-only refused with `CloudDatabaseError.permissionFailure(_:)`.
    /// Deleting a share, or a zone, leaves it. No zone can be created, and only database subscriptions saved.
    public func sharedDatabase(of userRecordName: String) throws -> UserCloudDatabase {
        UserCloudDatabase(server: self, userRecordName: userRecordName, scope: .shared)
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
    ) async throws -> UserCloudDatabase {
        if let fileName { _ = try await files.file(of: userRecordName, scope, path: fileName) }
        return UserCloudDatabase(server: self, userRecordName: userRecordName, scope: scope)
    }

    /// A user's database, as the server names it: every user's account is available.
    package func database(ofUser userRecordName: String, scope: CloudNotification.DatabaseScope) -> UserDatabaseID {
        UserDatabaseID(userRecordName: userRecordName, scope: scope)
    }

    /// `nil`: the server's users have no account to lose.
    package var accountStatusOverride: CloudAccountStatus? { nil }

    /// Expires every change token, by compacting away every tombstone a token could still need.
    package func expireEveryChangeToken() async throws {
        try await compactChangeLogs(keepingTombstones: 0)
    }
}
