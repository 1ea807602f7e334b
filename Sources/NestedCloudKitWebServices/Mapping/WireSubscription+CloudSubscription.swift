import Foundation
import NestedCloudKitCodable

extension WireSubscription {
    /// The subscription dictionary of a portable subscription: a zone subscription as `"zone"` with its zone and
    /// `zoneWide: true`, a database subscription as `"database"`; either with `shouldSendContentAvailable`.
    init(_ subscription: CloudSubscription) {
        let notificationInfo = NotificationInfo(shouldSendContentAvailable: subscription.sendsContentAvailable)
        switch subscription.kind {
        case .database:
            self.init(
                subscriptionID: subscription.id, subscriptionType: "database", notificationInfo: notificationInfo)
        case .zone(let zoneID):
            self.init(
                subscriptionID: subscription.id, subscriptionType: "zone", zoneID: WireZoneID(zoneID), zoneWide: true,
                notificationInfo: notificationInfo)
        }
    }

    /// The dictionary that names a subscription to delete.
    init(deleting id: CloudSubscription.ID) {
        self.init(subscriptionID: id)
    }

    /// The portable subscription, or `nil` for a kind it has no form for (a query subscription).
    ///
    /// A zone subscription's zone is the current user's when the dictionary leaves the owner out, as everywhere;
    /// a missing `shouldSendContentAvailable` is `false`, the framework's default for `NotificationInfo`.
    func cloudSubscription(owners: ZoneOwners) -> CloudSubscription? {
        let sendsContentAvailable = notificationInfo?.shouldSendContentAvailable ?? false
        switch subscriptionType {
        case "database":
            return CloudSubscription(id: subscriptionID, kind: .database, sendsContentAvailable: sendsContentAvailable)
        case "zone":
            guard let zoneID else { return nil }
            return CloudSubscription(
                id: subscriptionID, kind: .zone(owners.zoneID(zoneID, default: .default)),
                sendsContentAvailable: sendsContentAvailable)
        default:
            return nil
        }
    }
}
