import Foundation
import NestedCloudKitCodable

/// The faults a ``FlakyDatabase`` injects, whatever the server behind it.
protocol RecordFaults: CloudDatabase {
    func fail(_ id: CloudRecord.ID, with error: CloudDatabaseError, times: Int) async
    func setUnreadable(_ ids: Set<CloudRecord.ID>) async
    func leaveOutAnswer(for id: CloudRecord.ID) async
    var requests: [[CloudRecord.ID]] { get async }
}

/// A client of any server that fails some records inside their requests, as CloudKit fails one record of a batch
/// (throttled, unavailable) while it accepts the others; can't read some records (a client that can't decode
/// one); and can take fewer items a request than the server does. Per record, so that the scenarios that need
/// those faults run on every server, the emulator over HTTP included.
actor FlakyDatabase<Base: CloudDatabase>: ForwardingCloudDatabase, RecordFaults {
    let base: Base
    nonisolated let maximumItemsPerRequest: Int
    /// The failures still to come of each record's saves and deletions, in order.
    private var failures: [CloudRecord.ID: [CloudDatabaseError]] = [:]
    /// Records every fetch fails to read, until a test makes them readable again.
    private var unreadable: Set<CloudRecord.ID> = []
    /// Records whose next save or deletion the server applies but leaves out of its answer.
    private var unanswered: Set<CloudRecord.ID> = []
    /// The records each upload request named, in order: what reached the server, and how.
    private(set) var requests: [[CloudRecord.ID]] = []

    init(_ base: Base, maximumItemsPerRequest: Int? = nil) {
        self.base = base
        self.maximumItemsPerRequest = maximumItemsPerRequest ?? base.maximumItemsPerRequest
    }

    /// Makes the next `times` saves or deletions of a record fail with `error`, the rest of their requests applied.
    func fail(_ id: CloudRecord.ID, with error: CloudDatabaseError, times: Int) {
        failures[id, default: []] += Array(repeating: error, count: times)
    }

    func setUnreadable(_ ids: Set<CloudRecord.ID>) {
        unreadable = ids
    }

    /// Makes the answer to the next save or deletion of a record leave it out, as a server that applied it and
    /// said nothing of it.
    func leaveOutAnswer(for id: CloudRecord.ID) {
        unanswered.insert(id)
    }

    func modifyRecords(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy, atomically: Bool
    ) async throws -> CloudModifyResults {
        guard recordsToSave.count + recordIDsToDelete.count <= maximumItemsPerRequest else {
            throw CloudDatabaseError.limitExceeded(
                limit: maximumItemsPerRequest, requested: recordsToSave.count + recordIDsToDelete.count)
        }
        requests.append(recordsToSave.map(\.id) + recordIDsToDelete)
        var failed: [CloudRecord.ID: CloudDatabaseError] = [:]
        for id in recordsToSave.map(\.id) + recordIDsToDelete {
            if var waiting = failures[id], !waiting.isEmpty {
                failed[id] = waiting.removeFirst()
                failures[id] = waiting
            }
        }
        let saving = recordsToSave.filter { failed[$0.id] == nil }
        let deleting = recordIDsToDelete.filter { failed[$0] == nil }
        var results: CloudModifyResults = (saveResults: [:], deleteResults: [:])
        if !saving.isEmpty || !deleting.isEmpty {
            results = try await base.modifyRecords(
                saving: saving, deleting: deleting, savePolicy: savePolicy, atomically: atomically)
        }
        for record in recordsToSave {
            if let error = failed[record.id] { results.saveResults[record.id] = .failure(error) }
        }
        for id in recordIDsToDelete { if let error = failed[id] { results.deleteResults[id] = .failure(error) } }
        for id in recordsToSave.map(\.id) + recordIDsToDelete where unanswered.remove(id) != nil {
            results.saveResults[id] = nil
            results.deleteResults[id] = nil
        }
        return results
    }

    func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        var changes = try await base.recordZoneChanges(
            inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        for record in changes.modifications where unreadable.contains(record.id) {
            changes.modificationFailures[record.id] = CloudDatabaseError.unreadable(record.id)
        }
        changes.modifications.removeAll { unreadable.contains($0.id) }
        return changes
    }

    func records(for ids: [CloudRecord.ID], desiredKeys: [String]?) async throws -> CloudRecordResults {
        var results = try await base.records(for: ids, desiredKeys: desiredKeys)
        for id in ids where unreadable.contains(id) { results[id] = .failure(CloudDatabaseError.unreadable(id)) }
        return results
    }
}

extension CloudDatabaseError {
    /// What a ``FlakyDatabase``'s fetch of a record it can't read fails with.
    static func unreadable(_ id: CloudRecord.ID) -> CloudDatabaseError {
        .invalidArguments("\(id) has a field this client can't read")
    }
}
