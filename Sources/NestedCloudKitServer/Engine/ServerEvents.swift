import Foundation
import NestedCloudKitCodable

/// What a server tells beyond its answers: the databases other users' requests changed, for a server that sends
/// pushes of its own (the emulator), and the pushes its subscriptions would send, for tests.
final class ServerEvents: Sendable {
    private let changedByOthers = Locked(Set<UserDatabaseID>())
    private let notifications = Locked([CloudNotification]())

    func noteChangedByOthers(_ database: UserDatabaseID) {
        changedByOthers.withLock { _ = $0.insert(database) }
    }

    func takeChangedByOthers() -> Set<UserDatabaseID> {
        changedByOthers.withLock { changed in
            defer { changed = [] }
            return changed
        }
    }

    /// Collects the pushes these subscriptions of a user's database send for changes in these zones.
    func notify(
        _ subscriptions: [CloudSubscription], of database: UserDatabaseID, ofChangesIn zones: [CloudRecord.ZoneID]
    ) {
        let changed = Set(zones)
        var sent: [CloudNotification] = []
        for subscription in subscriptions {
            let kind: CloudNotification.Kind
            switch subscription.kind {
            case .database:
                guard changed.contains(where: { $0 != .default }) else { continue }
                kind = .database
            case .zone(let zoneID):
                guard changed.contains(zoneID) else { continue }
                kind = .recordZone(zoneID)
            }
            sent.append(
                CloudNotification(
                    kind: kind, subscriptionID: subscription.id, databaseScope: database.scope,
                    userRecordName: database.userRecordName))
        }
        notifications.withLock { $0 += sent }
    }

    func takeNotifications() -> [CloudNotification] {
        notifications.withLock { notifications in
            defer { notifications = [] }
            return notifications
        }
    }
}
