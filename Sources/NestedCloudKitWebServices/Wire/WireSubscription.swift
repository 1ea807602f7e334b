import Foundation

/// A subscription dictionary: `{subscriptionID, subscriptionType, zoneID, zoneWide, notificationInfo, firesOn,
/// firesOnce, query}`.
///
/// The reference documents the types `"zone"` and `"query"`; `"database"` (what `CKDatabaseSubscription` saves
/// through the framework) isn't documented for Web Services, and is sent and read as observed from the framework's
/// name for it, an assumption. Query subscriptions are read (their `query` and `firesOn` are kept as the server
/// sent them) but this package has no portable form for them.
struct WireSubscription: Codable, Hashable, Sendable {
    /// `notificationInfo`: how the push looks. Only `shouldSendContentAvailable` is used here, for silent pushes.
    struct NotificationInfo: Codable, Hashable, Sendable {
        var shouldSendContentAvailable: Bool?
    }

    var subscriptionID: String
    var subscriptionType: String?
    var zoneID: WireZoneID?
    var zoneWide: Bool?
    var notificationInfo: NotificationInfo?
    var firesOn: [String]?
}

/// `subscriptions/modify`: create, update and delete subscriptions.
struct WireSubscriptionsModifyRequest: Codable, Hashable, Sendable {
    struct Operation: Codable, Hashable, Sendable {
        var operationType: OperationType
        var subscription: WireSubscription
    }

    enum OperationType: String, Codable, Hashable, Sendable {
        case create, update, delete
    }

    var operations: [Operation]
}

/// The response of `subscriptions/list` and `subscriptions/modify`: subscriptions, or error dictionaries in their
/// place.
struct WireSubscriptionsResponse: Decodable, Sendable {
    var subscriptions: [WireItemResult<WireSubscription>]
}
