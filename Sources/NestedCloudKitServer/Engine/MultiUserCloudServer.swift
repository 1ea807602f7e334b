import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

/// A server that holds many users' private and shared databases, on which what one user shares shows in another's
/// shared database: the in-memory server (`InMemoryCloudDatabase`) and the SQLite server (`SQLiteCloudServer`). The
/// emulator serves any of them through this protocol alone, so everything it offers works on every storage.
package protocol MultiUserCloudServer: AnyObject, Sendable {
    /// One user's private or shared database.
    ///
    /// - Parameter fileName: Where a server that keeps files keeps this database, for a caller that names its
    ///   files itself (the emulator's data directory); a server in memory ignores it.
    func database(of userRecordName: String, scope: CloudNotification.DatabaseScope, fileName: String?) async throws
        -> any CloudRecordStoringDatabase & ShareAcceptingDatabase

    /// Whether `database` is one of this server's, rather than one of a server a reset replaced.
    func holds(_ database: any CloudDatabase) -> Bool

    /// Every share a user owns or takes part in, with its owner.
    func shares(involving user: String) async throws -> [(owner: String, record: CloudRecord)]

    /// The share with this short GUID, and its owner; `nil` if no user has it.
    func share(withShortGUID shortGUID: String) async throws -> (owner: String, record: CloudRecord)?

    /// The databases other users' requests changed since the last call: a server that sends pushes of its own
    /// tells their subscribers.
    func takeDatabasesChangedByOthers() async -> Set<UserDatabaseID>

    /// Expires every change token handed out, in every user's databases, as CloudKit does after a while.
    func expireEveryChangeToken() async throws

    /// Deletes a zone of a user's private database as something other than the app would: the user deleting the
    /// app's data in Settings (`.purged`), or an encrypted-data reset. The users it was shared with lose it.
    func deleteZone(_ zoneID: CloudRecord.ZoneID, ofUser user: String, reason: CloudZoneDeletion.Reason) async throws

    /// Lets go of what the server holds open (its files, checkpointed), once the files being opened are open;
    /// requests made afterwards fail.
    func close() async throws
}

/// A database a server holds on its own, outside any user's (the emulator's public databases): the in-memory
/// database and a SQLite file.
package protocol StandaloneCloudDatabase: CloudRecordStoringDatabase {
    /// Expires every change token handed out, as CloudKit does after a while.
    func expireEveryChangeToken() async throws

    /// Lets go of what the database holds open; requests made afterwards fail.
    func close() throws
}
