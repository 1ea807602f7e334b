import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

extension InMemoryCloudDatabase {
    /// One user's private database on this server, whoever is signed in: alice's and bob's devices in one test.
    ///
    /// ```swift
    /// let server = InMemoryCloudDatabase()
    /// let alice = server.privateDatabase(of: "_alice")
    /// let bob = server.sharedDatabase(of: "_bob")
    /// ```
    public nonisolated func privateDatabase(of userRecordName: String) -> ScopedDatabase {
        ScopedDatabase(server: self, caller: Caller(userRecordName: userRecordName, scope: .private))
    }

    /// One user's shared database on this server: the zones others share with them, named by their owners
    /// (`CloudRecord.ZoneID(zoneName: "Lists", ownerName: "_alice")`), holding what the shares they accepted
    /// cover.
    ///
    /// Writes go to the owner's database under the user's permission: read-write to change or add a record
    /// (a new one through a parent the share covers), read-only refused with
    /// `CloudDatabaseError/permissionFailure(_:)`. Deleting a share, or a zone, leaves it. Zone changes report a
    /// record the user can no longer see as deleted, and database changes a zone they can no longer see any record
    /// of. No zone can be created, and only database subscriptions saved.
    public nonisolated func sharedDatabase(of userRecordName: String) -> ScopedDatabase {
        ScopedDatabase(server: self, caller: Caller(userRecordName: userRecordName, scope: .shared))
    }

    /// One user's private or shared database on an ``InMemoryCloudDatabase``, made by
    /// ``InMemoryCloudDatabase/privateDatabase(of:)`` and ``InMemoryCloudDatabase/sharedDatabase(of:)``: what
    /// that user's device sees, whoever the server's signed-in user is.
    ///
    /// Requests go through the server's ``InMemoryCloudDatabase/network``: its counts, faults and latency;
    /// an account status set with ``InMemoryCloudDatabase/setAccountStatus(_:)`` applies to every user.
    public struct ScopedDatabase: CloudDatabase, CloudServerFront {
        /// The server.
        package let server: InMemoryCloudDatabase
        let caller: Caller

        /// The user whose database this is.
        package var userRecordName: String { caller.userRecordName ?? "" }

        /// Which of the user's databases this is: `.private` or `.shared`.
        package var scope: CloudNotification.DatabaseScope { caller.scope }

        /// The server's limit.
        public var maximumItemsPerRequest: Int { server.maximumItemsPerRequest }

        package var cloudServer: CloudServer<InMemoryStorage> { server.cloudServer }

        package func serverDatabase() async throws -> UserDatabaseID {
            try await server.database(of: caller)
        }

        /// Accepts a share as this database's user; see ``InMemoryCloudDatabase/acceptShare(shortGUID:)``.
        public func acceptShare(shortGUID: String) async throws -> CloudShare {
            try await server.acceptShare(shortGUID: shortGUID, as: caller)
        }

        /// What a share's URL tells this database's user; see
        /// ``InMemoryCloudDatabase/shareMetadata(shortGUID:fetchingRootRecord:)``.
        public func shareMetadata(shortGUID: String, fetchingRootRecord: Bool = false) async throws
            -> CloudShare.Metadata
        {
            try await server.shareMetadata(shortGUID: shortGUID, fetchingRootRecord: fetchingRootRecord, as: caller)
        }

        /// Deletes a zone of this user's private database as the user (`.purged`) or CloudKit would; see
        /// ``InMemoryCloudDatabase/deleteZone(_:reason:)``. Does nothing in a shared database.
        public func deleteZone(_ zoneID: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason) async {
            guard scope == .private, let user = caller.userRecordName else { return }
            await server.deleteZone(zoneID, ofUser: user, reason: reason)
        }

        /// The user's record name; see `CloudDatabase/userRecordName()`.
        public func userRecordName() async throws -> String {
            try await server.userRecordName(as: caller)
        }

        /// The account's status; see `CloudDatabase/accountStatus()`.
        public func accountStatus() async throws -> CloudAccountStatus {
            try await server.accountStatus(as: caller)
        }
    }
}

extension InMemoryCloudDatabase.ScopedDatabase: ShareAcceptingDatabase {}

extension InMemoryCloudDatabase: MultiUserCloudServer, StandaloneCloudDatabase {
    /// One user's private or shared database; the server keeps no files, so `fileName` is ignored.
    package nonisolated func database(
        of userRecordName: String, scope: CloudNotification.DatabaseScope, fileName: String?
    ) -> any CloudRecordStoringDatabase & ShareAcceptingDatabase {
        scope == .shared ? sharedDatabase(of: userRecordName) : privateDatabase(of: userRecordName)
    }

    /// Whether `database` is a user's database on this server.
    package nonisolated func holds(_ database: any CloudDatabase) -> Bool {
        (database as? ScopedDatabase)?.server === self
    }

    /// Expires every change token of every user; see ``expireEveryUsersChangeTokens()``.
    package func expireEveryChangeToken() {
        expireEveryUsersChangeTokens()
    }

    /// Nothing to let go of: the server lives in memory.
    package nonisolated func close() {}
}
