import Foundation

/// What a CloudKit push says, read from its payload: which database or zone changed, so a client knows what to
/// fetch.
///
/// CloudKit puts its part of a push in a `ck` dictionary. A push is only a hint (pushes coalesce, and CloudKit may
/// drop some): answer it by fetching the changes since your tokens, never by trusting its contents as data.
///
/// ```swift
/// func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) async
///     -> UIBackgroundFetchResult {
///     guard let notification = CloudNotification(userInfo: userInfo) else { return .noData }
///     switch notification.kind {
///     case .database: try? await fetchDatabaseChanges()
///     case .recordZone(let zoneID): try? await fetchChanges(in: zoneID)
///     case .query, .unknown: try? await fetchEverythingSubscribed()
///     }
///     return .newData
/// }
/// ```
///
/// ## Where the keys come from
///
/// Apple documents `CKNotification(fromRemoteNotificationDictionary:)` and the properties it fills, not the
/// payload's keys; the keys read here are the ones CloudKit's pushes and its Web Services long-poll deliver, as
/// observed and as other clients read them:
/// - `ck.cid` the container, `ck.nid` the notification's ID, `ck.ckuserid` the user's record name.
/// - `ck.met` a database subscription's push: `sid` (subscription ID), `dbs` (database scope).
/// - `ck.fet` a zone subscription's push: `sid`, `zid` (zone name), `zoid` (zone owner), `dbs`.
/// - `ck.qry` a query subscription's push: `sid`, `rid` (record name), `zid`, `zoid`, `dbs`, `fo` (1 created,
///   2 updated, 3 deleted), `af` (the fields the subscription asked for).
/// - `dbs` follows `CKDatabase.Scope`'s raw values: 1 public, 2 private, 3 shared.
///
/// Anything else is tolerated: an unknown form is ``Kind/unknown``, still a CloudKit push (fetch everything
/// subscribed), and a payload without a `ck` dictionary is not a CloudKit push at all (`nil`).
public struct CloudNotification: Sendable, Hashable {
    /// What changed.
    public var kind: Kind
    /// The subscription that fired, when the push names it.
    public var subscriptionID: String?
    /// The database the change happened in, when the push names it.
    public var databaseScope: DatabaseScope?
    /// The container, when the push names it.
    public var containerIdentifier: String?
    /// CloudKit's ID of this notification.
    public var notificationID: String?
    /// The record name of the user the push is for.
    public var userRecordName: String?

    /// What a push reports.
    public enum Kind: Sendable, Hashable {
        /// Something changed in the database's zones (a database subscription): fetch the database's changes.
        case database
        /// Records of this zone changed (a zone subscription): fetch the zone's changes.
        case recordZone(CloudRecord.ZoneID)
        /// A record matching a query subscription was created, updated or deleted.
        case query(recordID: CloudRecord.ID?, reason: QueryReason?, fields: [String: String])
        /// A CloudKit push of a form this parser doesn't know: fetch everything subscribed.
        case unknown
    }

    /// Why a query subscription fired (`fo` in the payload).
    public enum QueryReason: Int, Sendable, Hashable, Codable {
        /// A matching record was created.
        case recordCreated = 1
        /// A matching record was updated.
        case recordUpdated = 2
        /// A matching record was deleted.
        case recordDeleted = 3
    }

    /// Which of a container's databases (`CKDatabase.Scope`).
    public enum DatabaseScope: Int, Sendable, Hashable, Codable {
        /// The public database.
        case `public` = 1
        /// The user's private database.
        case `private` = 2
        /// The databases shared with the user.
        case shared = 3
    }

    /// Creates a notification from its parts.
    public init(
        kind: Kind, subscriptionID: String? = nil, databaseScope: DatabaseScope? = nil,
        containerIdentifier: String? = nil, notificationID: String? = nil, userRecordName: String? = nil
    ) {
        self.kind = kind
        self.subscriptionID = subscriptionID
        self.databaseScope = databaseScope
        self.containerIdentifier = containerIdentifier
        self.notificationID = notificationID
        self.userRecordName = userRecordName
    }

    /// Reads a push's payload (`userInfo`, as the app delegate receives it); `nil` when it isn't a CloudKit push.
    public init?(userInfo: [AnyHashable: Any]) {
        guard let ck = userInfo["ck"] as? [AnyHashable: Any] else { return nil }
        self.init(ck: ck)
    }

    /// Reads a push's payload as JSON (the body a Web Services notification long-poll delivers); `nil` when it
    /// isn't JSON or isn't a CloudKit push.
    public init?(jsonData: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: jsonData),
            let payload = object as? [String: Any]
        else { return nil }
        self.init(userInfo: payload)
    }

    private init(ck: [AnyHashable: Any]) {
        let body: [AnyHashable: Any]
        if let database = ck["met"] as? [AnyHashable: Any] {
            body = database
            kind = .database
        } else if let zone = ck["fet"] as? [AnyHashable: Any] {
            body = zone
            kind = Self.zoneID(in: zone).map(Kind.recordZone) ?? .unknown
        } else if let query = ck["qry"] as? [AnyHashable: Any] {
            body = query
            let zoneID = Self.zoneID(in: query) ?? .default
            let recordID = Self.string(query["rid"]).map { CloudRecord.ID(recordName: $0, zoneID: zoneID) }
            let fields = (query["af"] as? [AnyHashable: Any] ?? [:]).reduce(into: [String: String]()) {
                if let name = $1.key as? String { $0[name] = Self.string($1.value) ?? "\($1.value)" }
            }
            kind = .query(
                recordID: recordID, reason: Self.integer(query["fo"]).flatMap(QueryReason.init(rawValue:)),
                fields: fields)
        } else {
            body = [:]
            kind = .unknown
        }
        subscriptionID = Self.string(body["sid"])
        databaseScope = Self.integer(body["dbs"]).flatMap(DatabaseScope.init(rawValue:))
        containerIdentifier = Self.string(ck["cid"])
        notificationID = Self.string(ck["nid"])
        userRecordName = Self.string(ck["ckuserid"])
    }

    private static func zoneID(in body: [AnyHashable: Any]) -> CloudRecord.ZoneID? {
        guard let zoneName = string(body["zid"]), !zoneName.isEmpty else { return nil }
        let owner = string(body["zoid"]).flatMap { $0.isEmpty ? nil : $0 }
        return CloudRecord.ZoneID(zoneName: zoneName, ownerName: owner ?? CloudRecord.ZoneID.currentUserOwnerName)
    }

    private static func string(_ value: Any?) -> String? {
        switch value {
        case let string as String: string
        case let number as Int: String(number)
        default: nil
        }
    }

    /// A number as JSON or a property list gives it (`NSNumber` on Apple platforms), or in a string.
    private static func integer(_ value: Any?) -> Int? {
        switch value {
        case let number as Int: number
        case let number as Int64: Int(exactly: number)
        case let number as Double: Int(exactly: number)
        case let string as String: Int(string)
        default: nil
        }
    }
}
