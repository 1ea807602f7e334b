/// A standing request for a push whenever something changes: the portable form of `CKDatabaseSubscription` and
/// `CKRecordZoneSubscription`.
///
/// A sync client subscribes once (to the whole database, or to the zones it syncs), then treats each push as a hint
/// to fetch the changes since its tokens; pushes coalesce and may be dropped, so a client also fetches on launch.
/// Parse a push's payload with ``CloudNotification``.
public struct CloudSubscription: Sendable, Hashable, Codable, Identifiable {
    /// The subscription's name, chosen by the app; saving another with the same ID replaces it.
    public var id: String
    /// What the subscription watches.
    public var kind: Kind
    /// Whether the push is silent and wakes the app (`content-available`), as a sync client wants; otherwise it
    /// needs an alert to be delivered at all.
    public var sendsContentAvailable: Bool

    /// Creates a subscription.
    public init(id: String, kind: Kind, sendsContentAvailable: Bool = true) {
        self.id = id
        self.kind = kind
        self.sendsContentAvailable = sendsContentAvailable
    }

    /// What a subscription watches.
    public enum Kind: Sendable, Hashable, Codable {
        /// Every custom zone of the database (`CKDatabaseSubscription`); the private database's default zone
        /// isn't included, as in CloudKit.
        case database
        /// The records of one zone (`CKRecordZoneSubscription`).
        case zone(CloudRecord.ZoneID)
    }
}
