import Foundation
import NestedCloudKitCodable

/// A database that passes each call to another and writes a line for it to a ``SyncTrace``
/// (``SyncTrace/database(_:client:)``).
struct TracingCloudDatabase: CloudDatabase {
    let base: any CloudDatabase
    let trace: SyncTrace
    let client: String

    var maximumItemsPerRequest: Int { base.maximumItemsPerRequest }

    /// Runs a call, and writes its line: `describe` fills in what it sent, `answer` what came back.
    private func traced<T: Sendable>(
        _ call: String, _ describe: (inout SyncTrace.Entry) -> Void = { _ in },
        answer: (inout SyncTrace.Entry, T) -> Void, _ body: () async throws -> T
    ) async throws -> T {
        var entry = SyncTrace.Entry(client: client, call: call)
        describe(&entry)
        do {
            let result = try await body()
            answer(&entry, result)
            trace.record(entry)
            return result
        } catch {
            entry.error = (error as? CloudDatabaseError)?.logCode ?? "\(type(of: error))"
            trace.record(entry)
            throw error
        }
    }

    private static func failures<Key>(
        _ results: [Key: Result<some Any, CloudDatabaseError>], _ make: (Key, String) -> SyncTrace.Entry.Failure
    ) -> [SyncTrace.Entry.Failure] {
        results.compactMap { key, result in
            if case .failure(let error) = result { make(key, error.logCode) } else { nil }
        }
    }

    private static func nonEmpty<Element>(_ elements: [Element]) -> [Element]? {
        elements.isEmpty ? nil : elements
    }

    /// The items of a request the server did what was asked with, in the request's order; `nil` for none.
    private static func succeeded<Key: Hashable>(
        _ keys: [Key], in results: [Key: Result<some Any, CloudDatabaseError>]
    ) -> [Key]? {
        nonEmpty(keys.filter { if case .success? = results[$0] { true } else { false } })
    }

    /// Record IDs in a stable order, so the same calls give the same lines.
    private static func sorted(_ ids: some Sequence<CloudRecord.ID>) -> [CloudRecord.ID] {
        ids.sorted {
            ($0.zoneID.ownerName, $0.zoneID.zoneName, $0.recordName) < (
                $1.zoneID.ownerName, $1.zoneID.zoneName, $1.recordName
            )
        }
    }

    private static func recordFailures(_ results: [CloudRecord.ID: Result<some Any, CloudDatabaseError>]) -> [SyncTrace
        .Entry.Failure]?
    {
        nonEmpty(
            failures(results) { SyncTrace.Entry.Failure(recordID: $0, error: $1) }.sorted {
                ($0.recordID?.recordName ?? "") < ($1.recordID?.recordName ?? "")
            })
    }

    func records(for ids: [CloudRecord.ID], desiredKeys: [String]?) async throws -> CloudRecordResults {
        try await traced(
            "records",
            { entry in
                entry.recordIDs = ids
                entry.desiredKeys = desiredKeys
            }
        ) { entry, results in
            entry.received = Self.nonEmpty(Self.sorted(results.keys).compactMap { try? results[$0]?.get() })
            entry.failures = Self.recordFailures(results)
        } _: {
            try await base.records(for: ids, desiredKeys: desiredKeys)
        }
    }

    func modifyRecords(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy, atomically: Bool
    ) async throws -> CloudModifyResults {
        try await traced(
            "modifyRecords",
            { entry in
                entry.saving = Self.nonEmpty(recordsToSave)
                entry.deleting = Self.nonEmpty(recordIDsToDelete)
            }
        ) { entry, results in
            entry.received = Self.nonEmpty(
                recordsToSave.compactMap { try? results.saveResults[$0.id]?.get() })
            entry.deleted = Self.succeeded(recordIDsToDelete, in: results.deleteResults)
            let failures =
                (Self.recordFailures(results.saveResults) ?? []) + (Self.recordFailures(results.deleteResults) ?? [])
            entry.failures = Self.nonEmpty(failures)
        } _: {
            try await base.modifyRecords(
                saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically)
        }
    }

    func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await traced(
            "query",
            { entry in
                entry.zoneID = zoneID
                entry.desiredKeys = desiredKeys
            }, answer: Self.describe
        ) {
            try await base.records(
                matching: query, inZoneWith: zoneID, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        }
    }

    func records(
        continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await traced("queryContinued", { $0.desiredKeys = desiredKeys }, answer: Self.describe) {
            try await base.records(continuingMatchFrom: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        }
    }

    private static func describe(_ entry: inout SyncTrace.Entry, _ page: CloudQueryPage) {
        entry.received = nonEmpty(page.matchResults.compactMap { try? $0.1.get() })
        entry.failures = nonEmpty(
            page.matchResults.compactMap { id, result in
                if case .failure(let error) = result {
                    SyncTrace.Entry.Failure(recordID: id, error: error.logCode)
                } else {
                    nil
                }
            })
        entry.moreComing = page.queryCursor != nil
    }

    func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults {
        try await traced(
            "modifyRecordZones",
            { entry in
                entry.zonesSaving = Self.nonEmpty(zonesToSave)
                entry.zonesDeleting = Self.nonEmpty(zonesToDelete)
            }
        ) { entry, results in
            entry.zones = Self.succeeded(zonesToSave, in: results.saveResults)
            entry.deletedZones = Self.succeeded(zonesToDelete, in: results.deleteResults)
            let failures = (zonesToSave + zonesToDelete).compactMap { zone -> SyncTrace.Entry.Failure? in
                guard case .failure(let error)? = results.saveResults[zone] ?? results.deleteResults[zone] else {
                    return nil
                }
                return SyncTrace.Entry.Failure(zoneID: zone, error: error.logCode)
            }
            entry.failures = Self.nonEmpty(failures)
        } _: {
            try await base.modifyRecordZones(saving: zonesToSave, deleting: zonesToDelete)
        }
    }

    func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await traced("allRecordZones") { entry, zones in
            entry.zones = zones
        } _: {
            try await base.allRecordZones()
        }
    }

    func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        try await traced(
            "recordZoneChanges",
            { entry in
                entry.zoneID = zoneID
                entry.token = token
                entry.desiredKeys = desiredKeys
            }
        ) { entry, changes in
            entry.received = Self.nonEmpty(changes.modifications)
            entry.deleted = Self.nonEmpty(changes.deletions.map(\.id))
            entry.failures = Self.recordFailures(
                changes.modificationFailures.mapValues { Result<Void, CloudDatabaseError>.failure($0) })
            entry.changeToken = changes.changeToken
            entry.moreComing = changes.moreComing
        } _: {
            try await base.recordZoneChanges(
                inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        }
    }

    func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws -> CloudDatabaseChanges {
        try await traced("databaseChanges", { $0.token = token }) { entry, changes in
            entry.changedZones = Self.nonEmpty(changes.modifiedZoneIDs)
            entry.deletedZones = Self.nonEmpty(changes.deletions.map(\.zoneID))
            entry.changeToken = changes.changeToken
            entry.moreComing = changes.moreComing
        } _: {
            try await base.databaseChanges(since: token, resultsLimit: resultsLimit)
        }
    }

    func userRecordName() async throws -> String {
        try await traced("userRecordName") { entry, name in
            entry.answer = name
        } _: {
            try await base.userRecordName()
        }
    }

    func accountStatus() async throws -> CloudAccountStatus {
        try await traced("accountStatus") { entry, status in
            entry.answer = status.rawValue
        } _: {
            try await base.accountStatus()
        }
    }

    func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        try await traced("modifySubscriptions") { _, _ in
        } _: {
            try await base.modifySubscriptions(saving: subscriptionsToSave, deleting: subscriptionIDsToDelete)
        }
    }

    func allSubscriptions() async throws -> [CloudSubscription] {
        try await traced("allSubscriptions") { _, _ in
        } _: {
            try await base.allSubscriptions()
        }
    }
}
