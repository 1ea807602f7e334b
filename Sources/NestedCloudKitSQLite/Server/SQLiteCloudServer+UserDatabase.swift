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

        private func file() throws -> SQLiteCloudDatabase {
            // A copy a failed refresh left behind is brought up to date before it is read.
            if scope == .shared { server.copies.retryPending(files: server.files, now: server.clock.now()) }
            return try server.files.file(of: userRecordName, scope)
        }

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
            try await file().records(for: ids, desiredKeys: desiredKeys)
        }

        package func modifyRecords(
            _ operations: [CloudRecordOperation], atomically: Bool,
            failing failures: [CloudRecord.ID: CloudDatabaseError]
        ) async throws -> CloudModifyResults {
            if scope == .shared {
                return try await server.modifySharedRecords(
                    operations, atomically: atomically, failing: failures, as: userRecordName)
            }
            let (results, zoneChanges) = try await file().modifyRecords(
                operations, atomically: atomically, failing: failures, madeBy: userRecordName,
                trackingZoneChanges: true)
            server.refreshSharedDatabases(after: zoneChanges, ownedBy: userRecordName)
            return results
        }

        package func queryPage(
            from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
        ) async throws -> CloudQueryPage {
            try await file().queryPage(from: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        }

        /// Creates and deletes zones; see `CloudDatabase.modifyRecordZones(saving:deleting:)`. In a shared
        /// database no zone can be created, and deleting one leaves every share of it the user joined.
        public func modifyRecordZones(
            saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
        ) async throws -> CloudZoneModifyResults {
            if scope == .shared {
                return try await server.modifySharedZones(
                    saving: zonesToSave, deleting: zonesToDelete, as: userRecordName)
            }
            let results = try await file().modifyRecordZones(saving: zonesToSave, deleting: zonesToDelete)
            server.refreshSharedDatabases(showing: zonesToSave + zonesToDelete, ownedBy: userRecordName)
            return results
        }

        /// Every zone of the database; see `CloudDatabase.allRecordZones()`.
        public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
            try await file().allRecordZones()
        }

        /// The changes of a zone since a token; see
        /// `CloudDatabase.recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)`.
        public func recordZoneChanges(
            inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
            resultsLimit: Int?
        ) async throws -> CloudRecordZoneChanges {
            try await file().recordZoneChanges(
                inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        }

        /// The zones changed since a token; see `CloudDatabase.databaseChanges(since:resultsLimit:)`.
        public func databaseChanges(
            since token: CloudChangeToken?, resultsLimit: Int?
        ) async throws -> CloudDatabaseChanges {
            try await file().databaseChanges(since: token, resultsLimit: resultsLimit)
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
            var refused: [CloudSubscription.ID: Result<CloudSubscription, CloudDatabaseError>] = [:]
            var accepted = subscriptionsToSave
            if scope == .shared {
                accepted = []
                for subscription in subscriptionsToSave {
                    if case .zone = subscription.kind {
                        refused[subscription.id] = .failure(SharedDatabaseRules.zoneSubscriptionRefusal(subscription))
                    } else {
                        accepted.append(subscription)
                    }
                }
            }
            var results = try await file().modifySubscriptions(
                saving: accepted, deleting: subscriptionIDsToDelete)
            results.saveResults.merge(refused) { saved, _ in saved }
            return results
        }

        /// Every subscription of the database; see `CloudDatabase.allSubscriptions()`.
        public func allSubscriptions() async throws -> [CloudSubscription] {
            try await file().allSubscriptions()
        }
    }
}

extension SQLiteCloudServer.UserDatabase: ShareAcceptingDatabase {}
