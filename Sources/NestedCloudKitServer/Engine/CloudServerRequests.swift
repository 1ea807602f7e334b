import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

/// What a ``CloudServer`` answers, whatever its storage: what a front holds, so that one front type serves every
/// server (``UserCloudDatabase`` is a user's database on the in-memory server and on the SQLite server alike).
///
/// Each request names its database with a resolver, called once the request is admitted (a signed-out account
/// fails there, counted as CloudKit counts it).
package protocol CloudServerRequests: Sendable {
    /// The most items one request may hold.
    var maximumItemsPerRequest: Int { get }

    func records(for ids: [CloudRecord.ID], desiredKeys: [String]?, in resolveDatabase: @escaping DatabaseResolver)
        async throws -> CloudRecordResults

    func modifyRecords(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError],
        in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudModifyResults

    func queryPage(
        from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int,
        in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudQueryPage

    func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID],
        in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudZoneModifyResults

    func allRecordZones(in resolveDatabase: @escaping DatabaseResolver) async throws -> [CloudRecord.ZoneID]

    func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?, in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudRecordZoneChanges

    func databaseChanges(
        since token: CloudChangeToken?, resultsLimit: Int?, in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudDatabaseChanges

    func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID],
        in resolveDatabase: @escaping DatabaseResolver
    ) async throws -> CloudSubscriptionModifyResults

    func allSubscriptions(in resolveDatabase: @escaping DatabaseResolver) async throws -> [CloudSubscription]

    /// Deletes a zone of a user's private database as something other than the app would.
    func deleteZone(_ zoneID: CloudRecord.ZoneID, ofUser user: String, reason: CloudZoneDeletion.Reason) async throws

    /// Accepts a share as the user `user` finds once the request is admitted.
    func acceptShare(shortGUID: String, as user: @escaping @Sendable () async throws -> String) async throws
        -> CloudShare

    /// What a share's URL tells the user `user` finds once the request is admitted.
    func shareMetadata(
        shortGUID: String, fetchingRootRecord: Bool, as user: @escaping @Sendable () async throws -> String
    ) async throws -> CloudShare.Metadata

    /// Every share a user owns or takes part in, with its owner.
    func shares(involving user: String) async throws -> [(owner: String, record: CloudRecord)]

    /// The share with this short GUID, and its owner; `nil` if no user has it.
    func share(withShortGUID shortGUID: String) async throws -> (owner: String, record: CloudRecord)?

    /// The databases other users' requests changed since the last call.
    func takeDatabasesChangedByOthers() -> Set<UserDatabaseID>

    /// Runs a request that reads no database (the account's) through the server's gate and limit.
    func request<T>(_ kind: CloudRequestKind, items: Int, _ body: @Sendable () async throws -> T) async throws -> T
}

extension CloudServer: CloudServerRequests {}
