import Foundation

/// A database that passes every call to another: write a wrapper (logging, counting, injecting faults) by
/// conforming and implementing only the calls it changes.
///
/// ```swift
/// actor CountingDatabase: ForwardingCloudDatabase {
///     let base: InMemoryCloudDatabase   // NestedCloudKitServer
///     private(set) var saves = 0
///
///     func modifyRecords(
///         saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
///         savePolicy: CloudRecordSavePolicy, atomically: Bool
///     ) async throws -> CloudModifyResults {
///         saves += recordsToSave.count
///         return try await base.modifyRecords(
///             saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically)
///     }
/// }
/// ```
public protocol ForwardingCloudDatabase: CloudDatabase {
    /// The type of the database the calls go to.
    associatedtype Base: CloudDatabase
    /// The database the calls go to.
    var base: Base { get }
}

extension ForwardingCloudDatabase {
    /// The base database's limit.
    public var maximumItemsPerRequest: Int { base.maximumItemsPerRequest }

    /// Asks the base database.
    public func records(for ids: [CloudRecord.ID], desiredKeys: [String]?) async throws -> CloudRecordResults {
        try await base.records(for: ids, desiredKeys: desiredKeys)
    }

    /// Asks the base database.
    public func modifyRecords(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy, atomically: Bool
    ) async throws -> CloudModifyResults {
        try await base.modifyRecords(
            saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically)
    }

    /// Asks the base database.
    public func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await base.records(
            matching: query, inZoneWith: zoneID, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    /// Asks the base database.
    public func records(
        continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await base.records(continuingMatchFrom: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    /// Asks the base database.
    public func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults {
        try await base.modifyRecordZones(saving: zonesToSave, deleting: zonesToDelete)
    }

    /// Asks the base database.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await base.allRecordZones()
    }

    /// Asks the base database.
    public func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        try await base.recordZoneChanges(
            inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    /// Asks the base database.
    public func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws
        -> CloudDatabaseChanges
    {
        try await base.databaseChanges(since: token, resultsLimit: resultsLimit)
    }

    /// Asks the base database.
    public func userRecordName() async throws -> String {
        try await base.userRecordName()
    }

    /// Asks the base database.
    public func accountStatus() async throws -> CloudAccountStatus {
        try await base.accountStatus()
    }

    /// Asks the base database.
    public func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        try await base.modifySubscriptions(saving: subscriptionsToSave, deleting: subscriptionIDsToDelete)
    }

    /// Asks the base database.
    public func allSubscriptions() async throws -> [CloudSubscription] {
        try await base.allSubscriptions()
    }
}
