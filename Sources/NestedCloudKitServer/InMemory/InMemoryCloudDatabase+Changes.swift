import Foundation
import NestedCloudKitCodable

// Changes since a token, and subscriptions: the server's (CloudServer), through the request gate.

extension InMemoryCloudDatabase {
    // MARK: Changes since a token

    /// The changes to a custom zone's records since a token; see
    /// `CloudDatabase/recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)`. A page holds at most
    /// ``maximumItemsPerRequest`` changes.
    public func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        try await recordZoneChanges(
            inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit, as: .signedIn)
    }

    func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?, as caller: Caller
    ) async throws -> CloudRecordZoneChanges {
        let request = try await beginRequest(.zoneChanges, items: 0)
        let changes = try await server.recordZoneChanges(
            inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit,
            in: try database(of: caller))
        gate.statistics.recordsFetched += changes.modifications.count
        return try respond(to: request, with: changes)
    }

    /// The zones created, changed and deleted since a token; see
    /// `CloudDatabase/databaseChanges(since:resultsLimit:)`.
    public func databaseChanges(
        since token: CloudChangeToken?, resultsLimit: Int?
    ) async throws -> CloudDatabaseChanges {
        try await databaseChanges(since: token, resultsLimit: resultsLimit, as: .signedIn)
    }

    func databaseChanges(
        since token: CloudChangeToken?, resultsLimit: Int?, as caller: Caller
    ) async throws -> CloudDatabaseChanges {
        let request = try await beginRequest(.databaseChanges, items: 0)
        let changes = try await server.databaseChanges(
            since: token, resultsLimit: resultsLimit, in: try database(of: caller))
        return try respond(to: request, with: changes)
    }

    // MARK: Subscriptions

    /// Saves and deletes subscriptions; see `CloudDatabase/modifySubscriptions(saving:deleting:)`. The pushes they
    /// would send are collected for ``takeNotifications()``.
    public func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        try await modifySubscriptions(saving: subscriptionsToSave, deleting: subscriptionIDsToDelete, as: .signedIn)
    }

    func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID],
        as caller: Caller
    ) async throws -> CloudSubscriptionModifyResults {
        let request = try await beginRequest(
            .subscriptions, items: subscriptionsToSave.count + subscriptionIDsToDelete.count)
        let results = try await server.modifySubscriptions(
            saving: subscriptionsToSave, deleting: subscriptionIDsToDelete, in: try database(of: caller))
        return try respond(to: request, with: results)
    }

    /// Every subscription of the signed-in user's database, by ID.
    public func allSubscriptions() async throws -> [CloudSubscription] {
        try await allSubscriptions(as: .signedIn)
    }

    func allSubscriptions(as caller: Caller) async throws -> [CloudSubscription] {
        let request = try await beginRequest(.subscriptions, items: 0)
        return try respond(to: request, with: try await server.allSubscriptions(in: try database(of: caller)))
    }
}
