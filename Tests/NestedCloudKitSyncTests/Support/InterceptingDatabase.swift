import Foundation
import NestedCloudKitCodable
import NestedCloudKitSync

/// Holds a store a wrapper's hook writes to, set after the device is made.
///
/// `@unchecked Sendable` is sound: `value` is only touched while `lock` is held.
final class StoreBox: @unchecked Sendable {
    private var value: SyncStore?
    private let lock = NSLock()
    var store: SyncStore? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

/// A database in front of the in-memory server that misbehaves on purpose: runs a hook once in the middle of the
/// first upload (after the engine read the batch, before the server saw it, as a user editing during a sync), refuses
/// requests with more saves than a limit (as CloudKit refuses a request too large in bytes, without saying the
/// limit), and refuses some records every time.
actor InterceptingDatabase: CloudDatabase {
    let base: InMemoryCloudDatabase
    private var hook: (@Sendable () async throws -> Void)?
    private let maximumSaves: Int?
    private let refused: [CloudRecord.ID: CloudDatabaseError]
    /// The number of saves of each upload the server accepted to look at.
    private(set) var uploadSizes: [Int] = []
    nonisolated var maximumItemsPerRequest: Int { base.maximumItemsPerRequest }

    init(
        base: InMemoryCloudDatabase, maximumSaves: Int? = nil, refused: [CloudRecord.ID: CloudDatabaseError] = [:],
        duringFirstUpload hook: (@Sendable () async throws -> Void)? = nil
    ) {
        self.base = base
        self.maximumSaves = maximumSaves
        self.refused = refused
        self.hook = hook
    }

    func modifyRecords(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy, atomically: Bool
    ) async throws -> CloudModifyResults {
        if !recordsToSave.isEmpty, let hook {
            self.hook = nil
            try await hook()
        }
        if let maximumSaves, recordsToSave.count > maximumSaves {
            throw CloudDatabaseError.limitExceeded(limit: nil, requested: nil)
        }
        uploadSizes.append(recordsToSave.count)
        var results = try await base.modifyRecords(
            saving: recordsToSave.filter { refused[$0.id] == nil }, deleting: recordIDsToDelete,
            savePolicy: savePolicy, atomically: atomically)
        for record in recordsToSave {
            if let error = refused[record.id] { results.saveResults[record.id] = .failure(error) }
        }
        return results
    }

    func records(for ids: [CloudRecord.ID], desiredKeys: [String]?) async throws -> CloudRecordResults {
        try await base.records(for: ids, desiredKeys: desiredKeys)
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

    func allRecordZones() async throws -> [CloudRecord.ZoneID] { try await base.allRecordZones() }

    func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        try await base.recordZoneChanges(
            inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws -> CloudDatabaseChanges {
        try await base.databaseChanges(since: token, resultsLimit: resultsLimit)
    }

    func userRecordName() async throws -> String { try await base.userRecordName() }
    func accountStatus() async throws -> CloudAccountStatus { try await base.accountStatus() }

    func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        try await base.modifySubscriptions(saving: subscriptionsToSave, deleting: subscriptionIDsToDelete)
    }

    func allSubscriptions() async throws -> [CloudSubscription] { try await base.allSubscriptions() }
}
