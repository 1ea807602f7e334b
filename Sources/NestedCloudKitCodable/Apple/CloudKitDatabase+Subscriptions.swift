#if canImport(CloudKit)
import CloudKit
import Foundation

extension CloudKitDatabase {
    /// Saves and deletes subscriptions through `CKDatabase.modifySubscriptions(saving:deleting:)`; see
    /// ``CloudDatabase/modifySubscriptions(saving:deleting:)``.
    ///
    /// A database subscription is a `CKDatabaseSubscription`, a zone subscription a `CKRecordZoneSubscription`;
    /// ``CloudSubscription/sendsContentAvailable`` is their notification info's `shouldSendContentAvailable`.
    /// A subscription to the default zone fails in its result before the request, as on every backend (CloudKit
    /// subscribes only to zones that track changes); deleting a subscription that doesn't exist fails with
    /// ``CloudDatabaseError/invalidArguments(_:)`` naming it.
    public func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        var saveResults: [CloudSubscription.ID: Result<CloudSubscription, CloudDatabaseError>] = [:]
        var ckSubscriptions: [CKSubscription] = []
        var zones: [CloudSubscription.ID: CloudRecord.ZoneID] = [:]
        for subscription in subscriptionsToSave {
            if let refusal = subscription.refusal {
                saveResults[subscription.id] = .failure(refusal)
                continue
            }
            if case .zone(let zoneID) = subscription.kind { zones[subscription.id] = zoneID }
            ckSubscriptions.append(subscription.ckSubscription)
        }
        var deleteResults: [CloudSubscription.ID: Result<Void, CloudDatabaseError>] = [:]
        guard !ckSubscriptions.isEmpty || !subscriptionIDsToDelete.isEmpty else { return (saveResults, deleteResults) }
        let results = try await request(
            zoneID: zones.values.first, items: ckSubscriptions.count + subscriptionIDsToDelete.count
        ) {
            try await database.modifySubscriptions(saving: ckSubscriptions, deleting: subscriptionIDsToDelete)
        }
        for subscription in subscriptionsToSave where saveResults[subscription.id] == nil {
            switch results.saveResults[subscription.id] {
            case .success(let saved)?:
                saveResults[subscription.id] =
                    CloudSubscription(saved).map { .success($0) }
                    ?? .failure(.internalError("CloudKit saved \(subscription.id) as a subscription of another kind"))
            case .failure(let error)?:
                saveResults[subscription.id] = .failure(CloudDatabaseError(error, zoneID: zones[subscription.id]))
            case nil:
                saveResults[subscription.id] = .failure(
                    .internalError("CloudKit's answer to the save left out the subscription \(subscription.id)"))
            }
        }
        for id in subscriptionIDsToDelete {
            switch results.deleteResults[id] {
            case .success?:
                deleteResults[id] = .success(())
            case .failure(let error as CKError)? where error.code == .unknownItem:
                deleteResults[id] = .failure(.unknownSubscription(id))
            case .failure(let error)?:
                deleteResults[id] = .failure(CloudDatabaseError(error))
            case nil:
                deleteResults[id] = .failure(.internalError("CloudKit's answer to the delete left out \(id)"))
            }
        }
        return (saveResults, deleteResults)
    }

    /// Every database and zone subscription of the database, by ID, through `CKDatabase.allSubscriptions()`.
    ///
    /// Query subscriptions (`CKQuerySubscription`, made by other code or in the CloudKit console) have no
    /// ``CloudSubscription`` form and are left out.
    public func allSubscriptions() async throws -> [CloudSubscription] {
        try await request(zoneID: nil, items: nil) { try await database.allSubscriptions() }
            .compactMap(CloudSubscription.init)
            .sorted { $0.id < $1.id }
    }
}

extension CloudSubscription {
    /// The portable form of a database or zone subscription; `nil` for any other kind (a query subscription).
    public init?(_ subscription: CKSubscription) {
        let sendsContentAvailable = subscription.notificationInfo?.shouldSendContentAvailable ?? false
        switch subscription {
        case is CKDatabaseSubscription:
            self.init(id: subscription.subscriptionID, kind: .database, sendsContentAvailable: sendsContentAvailable)
        case let zoneSubscription as CKRecordZoneSubscription:
            self.init(
                id: subscription.subscriptionID, kind: .zone(CloudRecord.ZoneID(zoneSubscription.zoneID)),
                sendsContentAvailable: sendsContentAvailable)
        default:
            return nil
        }
    }

    /// The CloudKit subscription: `CKDatabaseSubscription` or `CKRecordZoneSubscription`, with notification info
    /// that sends content-available when asked.
    public var ckSubscription: CKSubscription {
        let subscription: CKSubscription =
            switch kind {
            case .database: CKDatabaseSubscription(subscriptionID: id)
            case .zone(let zoneID): CKRecordZoneSubscription(zoneID: zoneID.ckZoneID, subscriptionID: id)
            }
        let info = CKSubscription.NotificationInfo()
        info.shouldSendContentAvailable = sendsContentAvailable
        subscription.notificationInfo = info
        return subscription
    }
}
#endif
