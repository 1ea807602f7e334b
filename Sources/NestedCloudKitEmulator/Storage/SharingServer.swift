import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite

/// The server that holds every user's private and shared databases of one container and environment, so that what
/// one user shares shows in another's shared database: in memory, or a directory of SQLite files under the data
/// directory (`CONTAINER/ENVIRONMENT/`).
enum SharingServer: Sendable {
    case memory(InMemoryCloudDatabase)
    case files(SQLiteCloudServer)

    /// One user's private or shared database; under a data directory, in the emulator's file for it.
    func database(of userRecordName: String, scope: CloudNotification.DatabaseScope, file: URL?) throws
        -> any CloudRecordStoringDatabase & ShareAcceptingDatabase
    {
        switch self {
        case .memory(let server):
            return scope == .shared
                ? server.sharedDatabase(of: userRecordName) : server.privateDatabase(of: userRecordName)
        case .files(let server):
            guard let file else { return try server.privateDatabase(of: userRecordName) }
            return try server.database(of: userRecordName, scope: scope, at: file.path)
        }
    }

    /// Whether `database` is one of this server's, rather than of one a reset replaced.
    func holds(_ database: any CloudDatabase) -> Bool {
        switch self {
        case .memory(let server): (database as? InMemoryCloudDatabase.ScopedDatabase)?.server === server
        case .files(let server): (database as? SQLiteCloudServer.UserDatabase)?.server === server
        }
    }

    /// Every share a user owns or takes part in, with its owner.
    func shares(involving user: String) async throws -> [(owner: String, record: CloudRecord)] {
        switch self {
        case .memory(let server): await server.shares(involving: user)
        case .files(let server): try server.shares(involving: user)
        }
    }

    /// The share with this short GUID, and its owner.
    func share(withShortGUID shortGUID: String) async throws -> (owner: String, record: CloudRecord)? {
        switch self {
        case .memory(let server): await server.share(withShortGUID: shortGUID)
        case .files(let server): try server.share(withShortGUID: shortGUID)
        }
    }

    /// The databases other users' requests changed since the last call.
    func takeDatabasesChangedByOthers() async -> Set<SharedDatabaseRules.ChangedDatabase> {
        switch self {
        case .memory(let server): await server.takeDatabasesChangedByOthers()
        case .files(let server): server.takeDatabasesChangedByOthers()
        }
    }

    /// Expires every change token handed out: in memory directly, in files by compacting away every tombstone a
    /// token could still need.
    func expireChangeTokens() async {
        switch self {
        case .memory(let server): await server.expireEveryUsersChangeTokens()
        case .files(let server): try? await server.compactChangeLogs(keepingTombstones: 0)
        }
    }

    /// Closes the files, checkpointing them.
    func close() {
        if case .files(let server) = self { try? server.close() }
    }
}
