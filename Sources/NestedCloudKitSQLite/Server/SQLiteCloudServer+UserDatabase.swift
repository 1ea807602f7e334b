import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer

extension SQLiteCloudServer {
    /// One user's private or shared database on a ``SQLiteCloudServer``, made by
    /// ``SQLiteCloudServer/privateDatabase(of:)`` and ``SQLiteCloudServer/sharedDatabase(of:)``: what that user's
    /// device sees.
    public struct UserDatabase: CloudDatabase, CloudRecordStoringDatabase {
        /// The server.
        public let server: SQLiteCloudServer

        /// The user whose database this is.
        public let userRecordName: String

        /// Which of the user's databases this is: `.private` or `.shared`.
        public let scope: CloudNotification.DatabaseScope

        /// The server's limit.
        public var maximumItemsPerRequest: Int { server.maximumItemsPerRequest }

        /// This database, as the server names it.
        private var database: UserDatabaseID { UserDatabaseID(userRecordName: userRecordName, scope: scope) }

        /// Deletes a zone of this user's private database as the user (`.purged`) or CloudKit would; see
        /// ``SQLiteCloudServer/deleteZone(_:ofUser:reason:)``. Does nothing in a shared database.
        public func deleteZone(_ zoneID: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason) async throws {
            guard scope == .private else { return }
            try await server.deleteZone(zoneID, ofUser: userRecordName, reason: reason)
        }

        /// Accepts a share as this database's user; see ``SQLiteCloudServer/acceptShare(shortGUID:as:)``.
        public func acceptShare(shortGUID: String) async throws -> CloudShare {
            try await server.acceptShare(shortGUID: shortGUID, as: userRecordName)
        }

        /// What a share's URL tells this database's user; see
        /// ``SQLiteCloudServer/shareMetadata(shortGUID:fetchingRootRecord:as:)``.
        public func shareMetadata(shortGUID: String, fetchingRootRecord: Bool = false) async throws
            -> CloudShare.Metadata
        {
            try await server.shareMetadata(
                shortGUID: shortGUID, fetchingRootRecord: fetchingRootRecord, as: userRecordName)
        }

        /// Fetches records by ID; see `CloudDatabase.records(for:desiredKeys:)`.
        public func records(for ids: [CloudRecord.ID], desiredKeys: [String]?) async throws -> CloudRecordResults {
            try await server.server.records(for: ids, desiredKeys: desiredKeys, in: database)
        }

        package func modifyRecords(
            _ operations: [CloudRecordOperation], atomically: Bool,
            failing failures: [CloudRecord.ID: CloudDatabaseError]
        ) async throws -> CloudModifyResults {
            try await server.server.modifyRecords(operations, atomically: atomically, failing: failures, in: database)
        }

        package func queryPage(
            from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
        ) async throws -> CloudQueryPage {
            try await server.server.queryPage(
                from: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit, in: database)
        }

        /// Creates and deletes zones; see `CloudDatabase.modifyRecordZones(saving:deleting:)`. In a shared
        /// database no zone can be created, and deleting one leaves every share of it the user joined.
        public func modifyRecordZones(
            saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
        ) async throws -> CloudZoneModifyResults {
            try await server.server.modifyRecordZones(saving: zonesToSave, deleting: zonesToDelete, in: database)
        }

        /// Every zone of the database; see `CloudDatabase.allRecordZones()`.
        public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
            try await server.server.allRecordZones(in: database)
        }

        /// The changes of a zone since a token; see
        /// `CloudDatabase.recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)`.
        public func recordZoneChanges(
            inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
            resultsLimit: Int?
        ) async throws -> CloudRecordZoneChanges {
            try await server.server.recordZoneChanges(
                inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit, in: database)
        }

        /// The zones changed since a token; see `CloudDatabase.databaseChanges(since:resultsLimit:)`.
        public func databaseChanges(
            since token: CloudChangeToken?, resultsLimit: Int?
        ) async throws -> CloudDatabaseChanges {
            try await server.server.databaseChanges(since: token, resultsLimit: resultsLimit, in: database)
        }

        /// The user's record name; see `CloudDatabase.userRecordName()`.
        public func userRecordName() async throws -> String {
            userRecordName
        }

        /// Always `CloudAccountStatus.available`: the server's users have no account to lose.
        public func accountStatus() async throws -> CloudAccountStatus {
            .available
        }

        /// Saves and deletes subscriptions; see `CloudDatabase.modifySubscriptions(saving:deleting:)`. A shared
        /// database takes database subscriptions only, as CloudKit's.
        public func modifySubscriptions(
            saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
        ) async throws -> CloudSubscriptionModifyResults {
            try await server.server.modifySubscriptions(
                saving: subscriptionsToSave, deleting: subscriptionIDsToDelete, in: database)
        }

        /// Every subscription of the database; see `CloudDatabase.allSubscriptions()`.
        public func allSubscriptions() async throws -> [CloudSubscription] {
            try await server.server.allSubscriptions(in: database)
        }
    }
}

extension SQLiteCloudServer.UserDatabase: ShareAcceptingDatabase {}
