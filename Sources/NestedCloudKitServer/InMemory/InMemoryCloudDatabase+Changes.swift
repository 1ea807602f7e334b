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
        let database = try database(of: caller)
        guard zoneID != .default else { throw CloudDatabaseError.defaultZoneHasNoChanges }
        if let missing = Self.missingZoneError(zoneID, in: database) { throw missing }
        guard let log = database.zoneLogs[zoneID] else { throw CloudDatabaseError.zoneNotFound(zoneID) }
        let limit = try CloudDatabaseError.changePageSize(resultsLimit, maximum: maximumItemsPerRequest)
        let start = try position(of: token, for: zoneID, generation: log.generation) ?? log.startSequence
        let page = log.changes(after: start, limit: limit)
        var changes = CloudRecordZoneChanges(
            changeToken: ChangeLogPosition(zoneID: zoneID, generation: log.generation, sequence: page.through).token,
            moreComing: page.more)
        for (id, change) in page.changes {
            switch change {
            case .saved:
                guard let record = database.storage.records[id] else { continue }
                changes.modifications.append(record.keepingFields(desiredKeys))
            case .deleted(let recordType):
                changes.deletions.append(CloudRecordDeletion(id: id, recordType: recordType))
            }
        }
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
        let log = try database(of: caller).databaseLog
        let limit = try CloudDatabaseError.changePageSize(resultsLimit, maximum: maximumItemsPerRequest)
        let start = try position(of: token, for: nil, generation: log.generation) ?? log.startSequence
        let page = log.changes(after: start, limit: limit)
        var changes = CloudDatabaseChanges(
            changeToken: ChangeLogPosition(zoneID: nil, generation: log.generation, sequence: page.through).token,
            moreComing: page.more)
        for (key, deletion) in page.changes {
            if let reason = deletion {
                changes.deletions.append(CloudZoneDeletion(zoneID: key.zone, reason: reason))
            } else {
                changes.modifiedZoneIDs.append(key.zone)
            }
        }
        return try respond(to: request, with: changes)
    }

    /// Where a token points in a log of this generation; `nil` for a `nil` token.
    func position(
        of token: CloudChangeToken?, for zoneID: CloudRecord.ZoneID?, generation: Int
    ) throws -> Int? {
        guard let token else { return nil }
        let position = try ChangeLogPosition(token: token, for: zoneID)
        guard position.generation == generation else { throw CloudDatabaseError.changeTokenExpired(zoneID) }
        return position.sequence
    }
}
