import Foundation
import NestedCloudKitCodable

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
    /// Requests count in the server's ``InMemoryCloudDatabase/statistics`` and go through its faults and latency;
    /// an account status set with ``InMemoryCloudDatabase/setAccountStatus(_:)`` applies to every user.
    public struct ScopedDatabase: CloudDatabase, CloudRecordStoringDatabase {
        /// The server.
        public let server: InMemoryCloudDatabase
        let caller: Caller

        /// The user whose database this is.
        public var userRecordName: String { caller.userRecordName ?? "" }

        /// Which of the user's databases this is: `.private` or `.shared`.
        public var scope: CloudNotification.DatabaseScope { caller.scope }

        /// The server's limit.
        public var maximumItemsPerRequest: Int { server.maximumItemsPerRequest }

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

        /// Fetches records by ID; see `CloudDatabase/records(for:desiredKeys:)`.
        public func records(for ids: [CloudRecord.ID], desiredKeys: [String]?) async throws -> CloudRecordResults {
            try await server.records(for: ids, desiredKeys: desiredKeys, as: caller)
        }

        package func modifyRecords(
            _ operations: [CloudRecordOperation], atomically: Bool,
            failing failures: [CloudRecord.ID: CloudDatabaseError]
        ) async throws -> CloudModifyResults {
            try await server.modifyRecords(operations, atomically: atomically, failing: failures, as: caller)
        }

        package func queryPage(
            from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
        ) async throws -> CloudQueryPage {
            try await server.queryPage(from: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit, as: caller)
        }

        /// Creates and deletes zones; see `CloudDatabase/modifyRecordZones(saving:deleting:)`.
        public func modifyRecordZones(
            saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
        ) async throws -> CloudZoneModifyResults {
            try await server.modifyRecordZones(saving: zonesToSave, deleting: zonesToDelete, as: caller)
        }

        /// Every zone of the database; see `CloudDatabase/allRecordZones()`.
        public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
            try await server.allRecordZones(as: caller)
        }

        /// The changes of a zone since a token; see
        /// `CloudDatabase/recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)`.
        public func recordZoneChanges(
            inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
            resultsLimit: Int?
        ) async throws -> CloudRecordZoneChanges {
            try await server.recordZoneChanges(
                inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit, as: caller)
        }

        /// The zones changed since a token; see `CloudDatabase/databaseChanges(since:resultsLimit:)`.
        public func databaseChanges(
            since token: CloudChangeToken?, resultsLimit: Int?
        ) async throws -> CloudDatabaseChanges {
            try await server.databaseChanges(since: token, resultsLimit: resultsLimit, as: caller)
        }

        /// The user's record name; see `CloudDatabase/userRecordName()`.
        public func userRecordName() async throws -> String {
            try await server.userRecordName(as: caller)
        }

        /// The account's status; see `CloudDatabase/accountStatus()`.
        public func accountStatus() async throws -> CloudAccountStatus {
            try await server.accountStatus(as: caller)
        }

        /// Saves and deletes subscriptions; see `CloudDatabase/modifySubscriptions(saving:deleting:)`.
        public func modifySubscriptions(
            saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
        ) async throws -> CloudSubscriptionModifyResults {
            try await server.modifySubscriptions(
                saving: subscriptionsToSave, deleting: subscriptionIDsToDelete, as: caller)
        }

        /// Every subscription of the database; see `CloudDatabase/allSubscriptions()`.
        public func allSubscriptions() async throws -> [CloudSubscription] {
            try await server.allSubscriptions(as: caller)
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
