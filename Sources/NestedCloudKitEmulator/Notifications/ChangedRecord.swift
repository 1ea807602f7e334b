import NestedCloudKitCodable

/// A record a request created, updated or deleted: what subscriptions fire on.
struct ChangedRecord: Sendable {
    enum Change: Sendable {
        case created, updated, deleted

        /// `firesOn`'s name for the change.
        var firesOn: String {
            switch self {
            case .created: "create"
            case .updated: "update"
            case .deleted: "delete"
            }
        }

        /// The `fo` a query notification carries: 1 created, 2 updated, 3 deleted.
        var notificationValue: Int64 {
            switch self {
            case .created: 1
            case .updated: 2
            case .deleted: 3
            }
        }
    }

    /// The record as saved; as it was, for a deletion.
    var record: CloudRecord
    var change: Change
}
