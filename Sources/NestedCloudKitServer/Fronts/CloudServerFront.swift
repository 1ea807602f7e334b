import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

/// A `CloudDatabase` that is one database of a ``CloudServer``: every request goes to the server, for the database
/// the front names. The in-memory server (its signed-in user's database), a SQLite file, and a user's database on
/// either server (``UserCloudDatabase``) are such fronts; each adds only what is its own (who the user is, its test
/// controls, its files).
package protocol CloudServerFront: CloudRecordStoringDatabase {
    /// The server the requests go to, whatever its storage.
    var requests: any CloudServerRequests { get }

    /// The database the requests go to; finding it may fail, as a signed-out account does.
    func serverDatabase() async throws -> UserDatabaseID
}

extension CloudServerFront {
    /// Fetches records by ID; see `CloudDatabase/records(for:desiredKeys:)`.
    public func records(for ids: [CloudRecord.ID], desiredKeys: [String]?) async throws -> CloudRecordResults {
        try await requests.records(for: ids, desiredKeys: desiredKeys, in: serverDatabase)
    }

    /// Applies the items of a modify request under CloudKit's rules, as Web Services names them.
    package func modifyRecords(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError]
    ) async throws -> CloudModifyResults {
        try await requests.modifyRecords(
            operations, atomically: atomically, failing: failures, in: serverDatabase)
    }

    /// One page of a query, from its cursor; see ``CloudRecordStoringDatabase``.
    package func queryPage(
        from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await requests.queryPage(
            from: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit, in: serverDatabase)
    }

    /// Creates and deletes zones; see `CloudDatabase/modifyRecordZones(saving:deleting:)`. Deleting a zone deletes
    /// its records; in a shared database no zone can be created, and deleting one leaves every share of it the user
    /// joined.
    public func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults {
        try await requests.modifyRecordZones(
            saving: zonesToSave, deleting: zonesToDelete, in: serverDatabase)
    }

    /// Every zone of the database, sorted by name; see `CloudDatabase/allRecordZones()`.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await requests.allRecordZones(in: serverDatabase)
    }

    /// The changes to a custom zone's records since a token; see
    /// `CloudDatabase/recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)`. A page holds at most
    /// `maximumItemsPerRequest` changes.
    public func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        try await requests.recordZoneChanges(
            inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit,
            in: serverDatabase)
    }

    /// The zones created, changed and deleted since a token; see `CloudDatabase/databaseChanges(since:resultsLimit:)`.
    public func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws -> CloudDatabaseChanges
    {
        try await requests.databaseChanges(since: token, resultsLimit: resultsLimit, in: serverDatabase)
    }

    /// Saves and deletes subscriptions; see `CloudDatabase/modifySubscriptions(saving:deleting:)`. A shared
    /// database takes database subscriptions only, as CloudKit's.
    public func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        try await requests.modifySubscriptions(
            saving: subscriptionsToSave, deleting: subscriptionIDsToDelete, in: serverDatabase)
    }

    /// Every subscription of the database, by ID; see `CloudDatabase/allSubscriptions()`.
    public func allSubscriptions() async throws -> [CloudSubscription] {
        try await requests.allSubscriptions(in: serverDatabase)
    }
}
