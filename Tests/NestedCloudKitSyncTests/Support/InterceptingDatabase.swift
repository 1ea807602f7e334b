import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import NestedCloudKitSync

/// Holds a store a wrapper's hook writes to, set after the device is made.
final class StoreBox: Sendable {
    private let value = Locked<SyncStore?>(nil)
    var store: SyncStore? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// A database in front of the in-memory server that misbehaves on purpose: runs a hook once in the middle of the
/// first upload (after the engine read the batch, before the server saw it, as a user editing during a sync), refuses
/// requests with more saves than a limit (as CloudKit refuses a request too large in bytes, without saying the
/// limit), refuses some records every time, and leaves some records out of zone changes (a change feed that hasn't
/// caught up yet, as CloudKit's may not have). A client that can't read some records is ``FlakyDatabase``.
actor InterceptingDatabase: ForwardingCloudDatabase {
    let base: InMemoryCloudDatabase
    private var hook: (@Sendable () async throws -> Void)?
    private let maximumSaves: Int?
    private let refused: [CloudRecord.ID: CloudDatabaseError]
    private let hiddenFromChanges: Set<CloudRecord.ID>
    /// The number of saves of each upload the server accepted to look at.
    private(set) var uploadSizes: [Int] = []

    init(
        base: InMemoryCloudDatabase, maximumSaves: Int? = nil, refused: [CloudRecord.ID: CloudDatabaseError] = [:],
        hiddenFromChanges: Set<CloudRecord.ID> = [], duringFirstUpload hook: (@Sendable () async throws -> Void)? = nil
    ) {
        self.base = base
        self.maximumSaves = maximumSaves
        self.refused = refused
        self.hiddenFromChanges = hiddenFromChanges
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

    func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        var changes = try await base.recordZoneChanges(
            inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        changes.modifications.removeAll { hiddenFromChanges.contains($0.id) }
        return changes
    }
}
