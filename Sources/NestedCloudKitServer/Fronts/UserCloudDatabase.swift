import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

/// One user's private or shared database on a server of several users: what that user's device sees, whoever else
/// uses the server. `InMemoryCloudDatabase.privateDatabase(of:)` and `sharedDatabase(of:)` make them, and so do
/// the SQLite server's (`SQLiteCloudServer`); the rules, the sharing calls and the zone deletions are the same on
/// both, from this one type.
///
/// ```swift
/// let server = InMemoryCloudDatabase()
/// let alice = server.privateDatabase(of: "_alice")
/// let bob = server.sharedDatabase(of: "_bob")
/// let share = try await bob.acceptShare(shortGUID: shortGUID)
/// ```
///
/// A shared database holds the zones others share with the user, named by their owners
/// (`CloudRecord.ZoneID(zoneName: "Lists", ownerName: "_alice")`), with what the shares they accepted cover. Writes
/// go to the owner's database under the user's permission: read-write to change or add a record (a new one through
/// a parent the share covers), read-only refused with `CloudDatabaseError.permissionFailure(_:)`. Deleting a share,
/// or a zone, leaves it. Zone changes report a record the user can no longer see as deleted, and database changes
/// a zone they can no longer see any record of. No zone can be created, and only database subscriptions saved.
public struct UserCloudDatabase: CloudDatabase, ShareAcceptingDatabase, CloudServerFront {
    /// The server the database is one of.
    package let server: any MultiUserCloudServer

    /// The user whose database this is.
    package let userRecordName: String

    /// Which of the user's databases this is: `.private` or `.shared`.
    package let scope: CloudNotification.DatabaseScope

    package init(server: any MultiUserCloudServer, userRecordName: String, scope: CloudNotification.DatabaseScope) {
        self.server = server
        self.userRecordName = userRecordName
        self.scope = scope
    }

    /// The server's limit.
    public var maximumItemsPerRequest: Int { server.requests.maximumItemsPerRequest }

    package var requests: any CloudServerRequests { server.requests }

    /// The database, once the server admits the user (a signed-out account on a test's server fails here).
    package func serverDatabase() async throws -> UserDatabaseID {
        try await server.database(ofUser: userRecordName, scope: scope)
    }

    /// Accepts a share as this database's user, from the short GUID of its URL (`CloudShare.shortGUID`), as
    /// CloudKit Web Services' `records/accept` does: an invited participant becomes accepted; anyone else joins a
    /// public share as a public user with its public permission. The share's new version is in its owner's
    /// database, and what it covers appears in the user's shared database.
    ///
    /// - Returns: The share as it is once accepted, in the owner's zone as the user's shared database names it.
    /// - Throws: `CloudDatabaseError.invalidArguments(_:)` for a short GUID no share has (a forged or mistyped
    ///   URL) and for the owner accepting their own share; `CloudDatabaseError.permissionFailure(_:)` for a user
    ///   a private share doesn't list.
    public func acceptShare(shortGUID: String) async throws -> CloudShare {
        try await requests.acceptShare(shortGUID: shortGUID) { try await serverDatabase().userRecordName }
    }

    /// What a share's URL tells this database's user before they accept it, from its short GUID, as Web Services'
    /// `records/resolve` and `CKFetchShareMetadataOperation` do.
    ///
    /// - Parameters:
    ///   - shortGUID: The last part of the share's URL.
    ///   - fetchingRootRecord: Whether to include the root record (for a hierarchy share).
    /// - Throws: `CloudDatabaseError.invalidArguments(_:)` for a short GUID no share has;
    ///   `CloudDatabaseError.permissionFailure(_:)` for a user a private share doesn't list.
    public func shareMetadata(shortGUID: String, fetchingRootRecord: Bool = false) async throws
        -> CloudShare.Metadata
    {
        try await requests.shareMetadata(shortGUID: shortGUID, fetchingRootRecord: fetchingRootRecord) {
            try await serverDatabase().userRecordName
        }
    }

    /// Deletes a zone of this user's private database as something other than the app would: the user deleting the
    /// app's data in Settings (`CloudZoneDeletion.Reason.purged`: requests for the zone then fail with
    /// `CloudDatabaseError.userDeletedZone(_:)` until the app creates it again), or an encrypted-data reset. The
    /// users it was shared with lose it. Does nothing in a shared database, to the default zone or to a zone that
    /// doesn't exist.
    public func deleteZone(_ zoneID: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason) async throws {
        guard scope == .private else { return }
        try await requests.deleteZone(zoneID, ofUser: userRecordName, reason: reason)
    }

    /// The user's record name; see `CloudDatabase.userRecordName()`.
    public func userRecordName() async throws -> String {
        try await requests.request(.account, items: 0) { try await serverDatabase().userRecordName }
    }

    /// The account's status: available, unless a test's server set another (`InMemoryCloudDatabase.setAccountStatus(_:)`
    /// applies to every user); see `CloudDatabase.accountStatus()`.
    public func accountStatus() async throws -> CloudAccountStatus {
        let status = await server.accountStatusOverride ?? .available
        return try await requests.request(.account, items: 0) { status }
    }
}
