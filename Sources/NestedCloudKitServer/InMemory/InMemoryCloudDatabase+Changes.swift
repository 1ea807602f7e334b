import Foundation
import NestedCloudKitCodable

// Changes since a token: each custom zone's log of saved and deleted records, and the database's log of zones.

extension InMemoryCloudDatabase {
    // MARK: Changes since a token

    /// The changes to a custom zone's records since a token; see
    /// `CloudDatabase/recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)`. A page holds at most
    /// ``maximumItemsPerRequest`` changes.
    public func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        try await recordZoneChanges(
            inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit, as: .signedIn)
    }

    func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?, as caller: Caller
    ) async throws -> CloudRecordZoneChanges {
        let request = try await beginRequest(.zoneChanges, items: 0)
        let changes = try ChangePages.recordZoneChanges(
            inZoneWith: zoneID, since: token, desiredKeys: desiredKeys, resultsLimit: resultsLimit,
            maximum: maximumItemsPerRequest, in: try database(of: caller))
        gate.statistics.recordsFetched += changes.modifications.count
        return try respond(to: request, with: changes)
    }

    /// The zones created, changed and deleted since a token; see
    /// `CloudDatabase/databaseChanges(since:resultsLimit:)`.
    public func databaseChanges(
        since token: CloudChangeToken?, resultsLimit: Int?
    ) async throws -> CloudDatabaseChanges {
        try await databaseChanges(since: token, resultsLimit: resultsLimit, as: .signedIn)
    }

    func databaseChanges(
        since token: CloudChangeToken?, resultsLimit: Int?, as caller: Caller
    ) async throws -> CloudDatabaseChanges {
        let request = try await beginRequest(.databaseChanges, items: 0)
        let changes = try ChangePages.databaseChanges(
            since: token, resultsLimit: resultsLimit, maximum: maximumItemsPerRequest, in: try database(of: caller))
        return try respond(to: request, with: changes)
    }
}

extension InMemoryUserDatabase: ChangeLogReading {
    func zoneLogBounds(_ zoneID: CloudRecord.ZoneID) -> ChangeLogBounds? {
        zoneLogs[zoneID].map { ChangeLogBounds(generation: $0.generation, start: $0.startSequence) }
    }

    func recordChanges(
        in zoneID: CloudRecord.ZoneID, after sequence: Int, limit: Int, desiredKeys: [String]?
    ) -> (modifications: [CloudRecord], deletions: [CloudRecordDeletion], through: Int, more: Bool) {
        guard let page = zoneLogs[zoneID]?.changes(after: sequence, limit: limit) else {
            return ([], [], sequence, false)
        }
        var modifications: [CloudRecord] = []
        var deletions: [CloudRecordDeletion] = []
        for (id, change) in page.changes {
            switch change {
            case .saved:
                if let record = storage.records[id] { modifications.append(record.keepingFields(desiredKeys)) }
            case .deleted(let recordType):
                deletions.append(CloudRecordDeletion(id: id, recordType: recordType))
            }
        }
        return (modifications, deletions, page.through, page.more)
    }

    func databaseLogBounds() -> ChangeLogBounds {
        ChangeLogBounds(generation: databaseLog.generation, start: databaseLog.startSequence)
    }

    func zoneChanges(after sequence: Int, limit: Int)
        -> (changes: [(zoneID: CloudRecord.ZoneID, deletion: CloudZoneDeletion.Reason?)], through: Int, more: Bool)
    {
        let page = databaseLog.changes(after: sequence, limit: limit)
        return (page.changes.map { ($0.key.zone, $0.change) }, page.through, page.more)
    }

    func missingZoneError(_ zoneID: CloudRecord.ZoneID) -> CloudDatabaseError? {
        storage.missingZoneError(zoneID)
    }
}
