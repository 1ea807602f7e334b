import Foundation
import NestedCloudKitCodable

/// Any database behind the simulated server's network (``network``): it counts what it is asked, waits before each
/// request (on the injected clock), and injects the faults a sync client must survive, by the same rules as
/// `InMemoryCloudDatabase`, whose network is the same type.
///
/// ```swift
/// let database = FaultInjectingDatabase(try SQLiteCloudDatabase(path: path))
/// database.network.loseNextResponse(to: .modify)      // the upload is applied, its answer lost
/// database.network.failRecord(noteID, with: .permissionFailure("read-only"))   // that record alone fails
/// ```
///
/// A faulted request doesn't reach the base database. A record's fault fails that record alone, before the request
/// goes on without it; in an atomic request, the other items of its custom zone fail too
/// (`CloudDatabaseError.batchRequestFailed(_:)`) and aren't sent, as CloudKit applies nothing of such a zone. A lost
/// response is lost after the base database applied the request.
public actor FaultInjectingDatabase: CloudDatabase {
    /// The database the requests go to.
    public nonisolated let base: any CloudDatabase
    /// What the test sets between it and the base database: latency, faults, lost responses; and what was asked.
    public nonisolated let network: SimulatedNetwork

    /// Wraps a database.
    ///
    /// - Parameters:
    ///   - base: The database the requests go to.
    ///   - latency: How long each request waits first.
    ///   - clock: The clock the latency waits on: a test's clock makes the waits take no time.
    public init(_ base: any CloudDatabase, latency: Duration = .zero, clock: any CloudClock = SystemCloudClock()) {
        self.base = base
        network = SimulatedNetwork(latency: latency, clock: clock)
    }

    /// The base database's limit.
    public nonisolated var maximumItemsPerRequest: Int { base.maximumItemsPerRequest }

    // MARK: CloudDatabase

    /// Fetches records by ID; a record a test failed fails alone.
    public func records(for ids: [CloudRecord.ID], desiredKeys: [String]?) async throws -> CloudRecordResults {
        try await request(.fetch, items: ids.count) {
            var results: CloudRecordResults = [:]
            var asked: [CloudRecord.ID] = []
            for id in ids {
                if let fault = network.takeFailure(of: id) {
                    results[id] = .failure(fault)
                } else {
                    asked.append(id)
                }
            }
            if !asked.isEmpty { results.merge(try await base.records(for: asked, desiredKeys: desiredKeys)) { $1 } }
            network.count {
                $0.recordsFetched += results.values.count { if case .success = $0 { true } else { false } }
            }
            return results
        }
    }

    /// Saves and deletes records; a record a test failed fails alone, or with its custom zone when atomic.
    public func modifyRecords(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy, atomically: Bool
    ) async throws -> CloudModifyResults {
        try await request(.modify, items: recordsToSave.count + recordIDsToDelete.count) {
            var saves = recordsToSave
            var deletions = recordIDsToDelete
            var saveResults: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
            var deleteResults: [CloudRecord.ID: Result<Void, CloudDatabaseError>] = [:]
            saves.removeAll { record in
                guard let fault = network.takeFailure(of: record.id) else { return false }
                saveResults[record.id] = .failure(fault)
                return true
            }
            deletions.removeAll { id in
                guard let fault = network.takeFailure(of: id) else { return false }
                deleteResults[id] = .failure(fault)
                return true
            }
            if atomically {
                let failed = AtomicZoneFailures(failed: Array(saveResults.keys) + Array(deleteResults.keys))
                failed.fail(&saves, id: \.id, results: &saveResults)
                failed.fail(&deletions, id: { $0 }, results: &deleteResults)
            }
            if !saves.isEmpty || !deletions.isEmpty {
                let results = try await base.modifyRecords(
                    saving: saves, deleting: deletions, savePolicy: savePolicy, atomically: atomically)
                saveResults.merge(results.saveResults) { $1 }
                deleteResults.merge(results.deleteResults) { $1 }
                network.count { $0.recordsSaved += results.saveResults.values.count { !$0.failed } }
                network.count { $0.recordsDeleted += results.deleteResults.values.count { !$0.failed } }
            }
            return (saveResults, deleteResults)
        }
    }

    /// A query's first page.
    public func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await request(.query, items: 0) {
            counted(
                try await base.records(
                    matching: query, inZoneWith: zoneID, desiredKeys: desiredKeys, resultsLimit: resultsLimit))
        }
    }

    /// A query's next page.
    public func records(
        continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await request(.query, items: 0) {
            counted(
                try await base.records(
                    continuingMatchFrom: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit))
        }
    }

    /// Creates and deletes zones.
    public func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults {
        try await request(.zones, items: zonesToSave.count + zonesToDelete.count) {
            try await base.modifyRecordZones(saving: zonesToSave, deleting: zonesToDelete)
        }
    }

    /// Every zone.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await request(.zones, items: 0) { try await base.allRecordZones() }
    }

    /// The changes of a zone's records since a token.
    public func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        try await request(.zoneChanges, items: 0) {
            let changes = try await base.recordZoneChanges(
                inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
            network.count { $0.recordsFetched += changes.modifications.count }
            return changes
        }
    }

    /// The changes of the database's zones since a token.
    public func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws
        -> CloudDatabaseChanges
    {
        try await request(.databaseChanges, items: 0) {
            try await base.databaseChanges(since: token, resultsLimit: resultsLimit)
        }
    }

    /// The user's record name.
    public func userRecordName() async throws -> String {
        try await request(.account, items: 0) { try await base.userRecordName() }
    }

    /// The account's status.
    public func accountStatus() async throws -> CloudAccountStatus {
        try await request(.account, items: 0) { try await base.accountStatus() }
    }

    /// Saves and deletes subscriptions.
    public func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        try await request(.subscriptions, items: subscriptionsToSave.count + subscriptionIDsToDelete.count) {
            try await base.modifySubscriptions(saving: subscriptionsToSave, deleting: subscriptionIDsToDelete)
        }
    }

    /// Every subscription.
    public func allSubscriptions() async throws -> [CloudSubscription] {
        try await request(.subscriptions, items: 0) { try await base.allSubscriptions() }
    }

    // MARK: Requests

    /// Runs one request through the gate: counted, waited for, failed if a test asked, its response lost if a test
    /// asked.
    private func request<Response: Sendable>(
        _ kind: CloudRequestKind, items: Int, _ body: @Sendable () async throws -> Response
    ) async throws -> Response {
        try await network.request(kind, items: items, maximum: maximumItemsPerRequest, body)
    }

    private nonisolated func counted(_ page: CloudQueryPage) -> CloudQueryPage {
        network.count {
            $0.recordsFetched += page.matchResults.count { if case .success = $0.1 { true } else { false } }
        }
        return page
    }
}
