#if canImport(CloudKit)
import CloudKit
import Foundation

extension CloudNotification {
    /// The portable form of a notification CloudKit's framework parsed
    /// (`CKNotification(fromRemoteNotificationDictionary:)`).
    ///
    /// ```swift
    /// guard let ckNotification = CKNotification(fromRemoteNotificationDictionary: userInfo) else { return .noData }
    /// let notification = CloudNotification(ckNotification)
    /// ```
    ///
    /// - `CKDatabaseNotification` is ``Kind/database``; `CKRecordZoneNotification` is ``Kind/recordZone(_:)``
    ///   (``Kind/unknown`` without its zone); `CKQueryNotification` is ``Kind/query(recordID:reason:fields:)`` with
    ///   the record fields the subscription asked for that read as text: strings, numbers (as `NSNumber` writes
    ///   them) and references (their record name); dates, locations, assets and lists are left out. Any other
    ///   notification is ``Kind/unknown``.
    /// - ``subscriptionID``, ``containerIdentifier`` and ``databaseScope`` are the notification's;
    ///   ``userRecordName`` is the record name of `subscriptionOwnerUserRecordID`. ``notificationID`` stays `nil`:
    ///   CloudKit's `CKNotification.ID` has no documented string form.
    public init(_ notification: CKNotification) {
        let kind: Kind
        let scope: CKDatabase.Scope?
        switch notification {
        case let database as CKDatabaseNotification:
            kind = .database
            scope = database.databaseScope
        case let zone as CKRecordZoneNotification:
            kind = zone.recordZoneID.map { .recordZone(CloudRecord.ZoneID($0)) } ?? .unknown
            scope = zone.databaseScope
        case let query as CKQueryNotification:
            kind = .query(
                recordID: query.recordID.map(CloudRecord.ID.init), reason: QueryReason(query.queryNotificationReason),
                fields: (query.recordFields ?? [:]).compactMapValues(Self.text))
            scope = query.databaseScope
        default:
            kind = .unknown
            scope = nil
        }
        self.init(
            kind: kind, subscriptionID: notification.subscriptionID, databaseScope: scope.flatMap(DatabaseScope.init),
            containerIdentifier: notification.containerIdentifier,
            userRecordName: notification.subscriptionOwnerUserRecordID?.recordName)
    }

    /// A field's value as text, when it reads as text.
    private static func text(_ value: Any) -> String? {
        switch value {
        case let string as String: string
        case let reference as CKRecord.Reference: reference.recordID.recordName
        case let number as NSNumber: number.stringValue
        case let number as Int: String(number)
        case let number as Int64: String(number)
        case let number as Double: String(number)
        default: nil
        }
    }
}

extension CloudNotification.QueryReason {
    /// The portable form of why a query subscription fired.
    init?(_ reason: CKQueryNotification.Reason) {
        switch reason {
        case .recordCreated: self = .recordCreated
        case .recordUpdated: self = .recordUpdated
        case .recordDeleted: self = .recordDeleted
        @unknown default: return nil
        }
    }
}

extension CloudNotification.DatabaseScope {
    /// The portable form of a database's scope.
    init?(_ scope: CKDatabase.Scope) {
        switch scope {
        case .public: self = .public
        case .private: self = .private
        case .shared: self = .shared
        @unknown default: return nil
        }
    }
}
#endif
