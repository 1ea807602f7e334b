import NestedCloudKitCodable

/// A database that counts the requests made through it, so the example can show how few the decoder needs.
actor RequestCountingDatabase: CloudDatabase {
    let base: any CloudDatabase
    private(set) var fetchRequests = 0
    private(set) var recordsFetched = 0
    private(set) var modifyRequests = 0
    private(set) var changeRequests = 0
    private(set) var accountRequests = 0
    private(set) var subscriptionRequests = 0

    init(_ base: any CloudDatabase) {
        self.base = base
    }

    nonisolated var maximumItemsPerRequest: Int { base.maximumItemsPerRequest }

    func resetCounts() {
        fetchRequests = 0
        recordsFetched = 0
        modifyRequests = 0
        changeRequests = 0
        accountRequests = 0
        subscriptionRequests = 0
    }

    func records(for ids: [CloudRecord.ID], desiredKeys: [String]?) async throws -> CloudRecordResults {
        fetchRequests += 1
        let results = try await base.records(for: ids, desiredKeys: desiredKeys)
        recordsFetched += results.values.count { (try? $0.get()) != nil }
        return results
    }

    func modifyRecords(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy, atomically: Bool
    ) async throws -> CloudModifyResults {
        modifyRequests += 1
        return try await base.modifyRecords(
            saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically)
    }

    func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await base.records(
            matching: query, inZoneWith: zoneID, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    func records(
        continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await base.records(continuingMatchFrom: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults {
        try await base.modifyRecordZones(saving: zonesToSave, deleting: zonesToDelete)
    }

    func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await base.allRecordZones()
    }

    func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        changeRequests += 1
        return try await base.recordZoneChanges(
            inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws -> CloudDatabaseChanges {
        changeRequests += 1
        return try await base.databaseChanges(since: token, resultsLimit: resultsLimit)
    }

    func userRecordName() async throws -> String {
        accountRequests += 1
        return try await base.userRecordName()
    }

    func accountStatus() async throws -> CloudAccountStatus {
        accountRequests += 1
        return try await base.accountStatus()
    }

    func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        subscriptionRequests += 1
        return try await base.modifySubscriptions(saving: subscriptionsToSave, deleting: subscriptionIDsToDelete)
    }

    func allSubscriptions() async throws -> [CloudSubscription] {
        subscriptionRequests += 1
        return try await base.allSubscriptions()
    }
}
