import Foundation
import NestedCloudKitCodable

// Subscriptions, and the pushes they would send, collected for takeNotifications().

extension InMemoryCloudDatabase {
    // MARK: Subscriptions

    /// Saves and deletes subscriptions; see `CloudDatabase/modifySubscriptions(saving:deleting:)`.
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
        let user = try user(of: caller)
        var database = try database(of: caller)
        var saveResults: [CloudSubscription.ID: Result<CloudSubscription, CloudDatabaseError>] = [:]
        var deleteResults: [CloudSubscription.ID: Result<Void, CloudDatabaseError>] = [:]
        for subscription in subscriptionsToSave {
            if let refusal = subscription.refusal {
                saveResults[subscription.id] = .failure(refusal)
            } else if caller.scope == .shared, case .zone = subscription.kind {
                saveResults[subscription.id] = .failure(SharedDatabaseRules.zoneSubscriptionRefusal(subscription))
            } else if case .zone(let zoneID) = subscription.kind,
                let missing = Self.missingZoneError(zoneID, in: database)
            {
                saveResults[subscription.id] = .failure(missing)
            } else {
                database.subscriptions[subscription.id] = subscription
                saveResults[subscription.id] = .success(subscription)
            }
        }
        for id in subscriptionIDsToDelete {
            if database.subscriptions.removeValue(forKey: id) != nil {
                deleteResults[id] = .success(())
            } else {
                deleteResults[id] = .failure(.unknownSubscription(id))
            }
        }
        if caller.scope == .shared {
            sharedDatabases[user] = database
        } else {
            users[user] = database
        }
        return try respond(to: request, with: (saveResults, deleteResults))
    }

    /// Every subscription of the signed-in user's database, by ID.
    public func allSubscriptions() async throws -> [CloudSubscription] {
        try await allSubscriptions(as: .signedIn)
    }

    func allSubscriptions(as caller: Caller) async throws -> [CloudSubscription] {
        let request = try await beginRequest(.subscriptions, items: 0)
        let subscriptions = try database(of: caller).subscriptions.values.sorted { $0.id < $1.id }
        return try respond(to: request, with: subscriptions)
    }

    /// Collects the pushes a user's subscriptions in one of their databases send for changes in these zones.
    func notifySubscribers(
        of user: String, scope: CloudNotification.DatabaseScope, ofChangesIn zones: [CloudRecord.ZoneID]
    ) {
        let database = scope == .shared ? sharedDatabases[user] : users[user]
        guard let subscriptions = database?.subscriptions, !subscriptions.isEmpty else { return }
        let changed = Set(zones)
        for subscription in subscriptions.values.sorted(by: { $0.id < $1.id }) {
            let kind: CloudNotification.Kind
            switch subscription.kind {
            case .database:
                guard changed.contains(where: { $0 != .default }) else { continue }
                kind = .database
            case .zone(let zoneID):
                guard changed.contains(zoneID) else { continue }
                kind = .recordZone(zoneID)
            }
            notifications.append(
                CloudNotification(
                    kind: kind, subscriptionID: subscription.id, databaseScope: scope, userRecordName: user))
        }
    }
}
