import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

/// A server that holds many users' private and shared databases, on which what one user shares shows in another's
/// shared database: the in-memory server (`InMemoryCloudDatabase`) and the SQLite server (`SQLiteCloudServer`). The
/// emulator serves any of them through this protocol alone, so everything it offers works on every storage.
package protocol MultiUserCloudServer: AnyObject, Sendable {
    /// The server the requests of every user's database go to.
    var requests: any CloudServerRequests { get }

    /// One user's private or shared database.
    ///
    /// - Parameter fileName: Where a server that keeps files keeps this database, for a caller that names its
    ///   files itself (the emulator's data directory); a server in memory ignores it.
    func database(of userRecordName: String, scope: CloudNotification.DatabaseScope, fileName: String?) async throws
        -> UserCloudDatabase

    /// The database a user's request goes to, once the server admits the user: a test's server refuses every
    /// user while its account status says so, and makes an empty database for a user it hasn't met.
    func database(ofUser userRecordName: String, scope: CloudNotification.DatabaseScope) async throws
        -> UserDatabaseID

    /// The account status a test set for every user, or `nil`: every user's account is available.
    var accountStatusOverride: CloudAccountStatus? { get async }

    /// Expires every change token handed out, in every user's databases, as CloudKit does after a while.
    func expireEveryChangeToken() async throws

    /// Lets go of what the server holds open (its files, checkpointed), once the files being opened are open;
    /// requests made afterwards fail.
    func close() async throws
}

extension MultiUserCloudServer {
    /// Whether `database` is a user's database on this server, rather than on a server a reset replaced.
    package func holds(_ database: any CloudDatabase) -> Bool {
        (database as? UserCloudDatabase)?.server === self
    }

    /// Every share a user owns or takes part in (invited, accepted, removed), with its owner, by owner, zone and
    /// name: what an admin view of a user's shares lists.
    package func shares(involving user: String) async throws -> [(owner: String, record: CloudRecord)] {
        try await requests.shares(involving: user)
    }

    /// The share with this short GUID, and the user whose database holds it; `nil` if no user has it: what a
    /// server serving share URLs looks up.
    package func share(withShortGUID shortGUID: String) async throws -> (owner: String, record: CloudRecord)? {
        try await requests.share(withShortGUID: shortGUID)
    }

    /// The databases other users' requests changed since the last call: an owner's private database a participant
    /// wrote to or accepted a share of, a user's shared database that an owner's change (or their own share being
    /// accepted or left) changed. A server that sends pushes of its own tells their subscribers.
    package func takeDatabasesChangedByOthers() -> Set<UserDatabaseID> {
        requests.takeDatabasesChangedByOthers()
    }

    /// Deletes a zone of a user's private database as something other than the app would: the user deleting the
    /// app's data in Settings (`.purged`), or an encrypted-data reset. The users it was shared with lose it.
    package func deleteZone(
        _ zoneID: CloudRecord.ZoneID, ofUser user: String, reason: CloudZoneDeletion.Reason
    ) async throws {
        try await requests.deleteZone(zoneID, ofUser: user, reason: reason)
    }
}

/// A database a server holds on its own, outside any user's (the emulator's public databases): the in-memory
/// database and a SQLite file.
package protocol StandaloneCloudDatabase: CloudRecordStoringDatabase {
    /// Expires every change token handed out, as CloudKit does after a while.
    func expireEveryChangeToken() async throws

    /// Lets go of what the database holds open; requests made afterwards fail.
    func close() throws
}
