import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer

extension SQLiteCloudServer {
    /// One user's private or shared database on a ``SQLiteCloudServer``, made by
    /// ``SQLiteCloudServer/privateDatabase(of:)`` and ``SQLiteCloudServer/sharedDatabase(of:)``: what that user's
    /// device sees.
    public struct UserDatabase: CloudDatabase, CloudServerFront {
        /// The server.
        package let server: SQLiteCloudServer

        /// The user whose database this is.
        package let userRecordName: String

        /// Which of the user's databases this is: `.private` or `.shared`.
        package let scope: CloudNotification.DatabaseScope

        /// The server's limit.
        public var maximumItemsPerRequest: Int { server.maximumItemsPerRequest }

        package var cloudServer: CloudServer<SQLiteStorage> { server.cloudServer }

        /// This database, as the server names it.
        package func serverDatabase() -> UserDatabaseID {
            UserDatabaseID(userRecordName: userRecordName, scope: scope)
        }

        /// Deletes a zone of this user's private database as the user (`.purged`) or CloudKit would; see
        /// `SQLiteCloudServer/deleteZone(_:ofUser:reason:)`. Does nothing in a shared database.
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

        /// The user's record name; see `CloudDatabase.userRecordName()`.
        public func userRecordName() async throws -> String {
            userRecordName
        }

        /// Always `CloudAccountStatus.available`: the server's users have no account to lose.
        public func accountStatus() async throws -> CloudAccountStatus {
            .available
        }
    }
}

extension SQLiteCloudServer.UserDatabase: ShareAcceptingDatabase {}
