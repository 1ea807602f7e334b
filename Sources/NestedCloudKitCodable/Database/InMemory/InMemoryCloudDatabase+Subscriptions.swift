import Foundation

// Subscriptions, and the pushes they would send, collected for takeNotifications().

extension InMemoryCloudDatabase {
    // MARK: Subscriptions

    /// Saves and deletes subscriptions; see ``CloudDatabase/modifySubscriptions(saving:deleting:)``.
    public func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        let request = try await beginRequest(
            .subscriptions, items: subscriptionsToSave.count + subscriptionIDsToDelete.count)
        let user = try signedInUser()
        var saveResults: [CloudSubscription.ID: Result<CloudSubscription, CloudDatabaseError>] = [:]
        var deleteResults: [CloudSubscription.ID: Result<Void, CloudDatabaseError>] = [:]
        for subscription in subscriptionsToSave {
            if let refusal = subscription.refusal {
                saveResults[subscription.id] = .failure(refusal)
            } else if case .zone(let zoneID) = subscription.kind,
                let database = users[user], let missing = Self.missingZoneError(zoneID, in: database)
            {
                saveResults[subscription.id] = .failure(missing)
            } else {
                users[user]?.subscriptions[subscription.id] = subscription
                saveResults[subscription.id] = .success(subscription)
            }
        }
        for id in subscriptionIDsToDelete {
            if users[user]?.subscriptions.removeValue(forKey: id) != nil {
                deleteResults[id] = .success(())
            } else {
                deleteResults[id] = .failure(.unknownSubscription(id))
            }
        }
        return try respond(to: request, with: (saveResults, deleteResults))
    }

    /// Every subscription of the signed-in user's database, by ID.
    public func allSubscriptions() async throws -> [CloudSubscription] {
        let request = try await beginRequest(.subscriptions, items: 0)
        let subscriptions = try userDatabase().subscriptions.values.sorted { $0.id < $1.id }
        return try respond(to: request, with: subscriptions)
    }

    /// Collects the pushes the signed-in user's subscriptions send for changes in these zones.
    func notifySubscribers(ofChangesIn zones: [CloudRecord.ZoneID]) {
        guard let currentUser, let subscriptions = users[currentUser]?.subscriptions, !subscriptions.isEmpty else {
            return
        }
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
                    kind: kind, subscriptionID: subscription.id, databaseScope: .private,
                    userRecordName: currentUser))
        }
    }
}
