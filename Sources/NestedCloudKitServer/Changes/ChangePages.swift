import Foundation
import NestedCloudKitCodable

/// Where a log's tokens are valid: its generation (a token of another one expired), where a token-less read starts,
/// and the position below which a token could miss a compacted deletion.
package struct ChangeLogBounds: Sendable {
    package var generation: Int
    package var start: Int
    package var horizon: Int

    package init(generation: Int, start: Int, horizon: Int = 0) {
        self.generation = generation
        self.start = start
        self.horizon = horizon
    }
}

/// The changes since a token, a page at a time, written once for every server that keeps change logs: the token
/// read and checked, the page's size, and the answer with the token that continues after it.
package enum ChangePages {
    /// The changes to a custom zone's records since a token; see
    /// `CloudDatabase.recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)`.
    package static func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?, maximum: Int, in log: some CloudStorageTransaction
    ) throws -> CloudRecordZoneChanges {
        guard zoneID != .default else { throw CloudDatabaseError.defaultZoneHasNoChanges }
        if let missing = try log.missingZoneError(zoneID) { throw missing }
        let limit = try CloudDatabaseError.changePageSize(resultsLimit, maximum: maximum)
        guard let bounds = try log.zoneLogBounds(zoneID) else { throw CloudDatabaseError.zoneNotFound(zoneID) }
        let start = try start(of: token, for: zoneID, in: bounds)
        let page = try log.recordChanges(in: zoneID, after: start, limit: limit, desiredKeys: desiredKeys)
        var changes = CloudRecordZoneChanges(
            changeToken: ChangeLogPosition(zoneID: zoneID, generation: bounds.generation, sequence: page.through).token,
            moreComing: page.more)
        changes.modifications = page.modifications
        changes.deletions = page.deletions
        return changes
    }

    /// The zones created, changed and deleted since a token; see `CloudDatabase.databaseChanges(since:resultsLimit:)`.
    package static func databaseChanges(
        since token: CloudChangeToken?, resultsLimit: Int?, maximum: Int, in log: some CloudStorageTransaction
    ) throws -> CloudDatabaseChanges {
        let limit = try CloudDatabaseError.changePageSize(resultsLimit, maximum: maximum)
        let bounds = try log.databaseLogBounds()
        let page = try log.zoneChanges(after: try start(of: token, for: nil, in: bounds), limit: limit)
        var changes = CloudDatabaseChanges(
            changeToken: ChangeLogPosition(zoneID: nil, generation: bounds.generation, sequence: page.through).token,
            moreComing: page.more)
        for (zoneID, deletion) in page.changes {
            if let reason = deletion {
                changes.deletions.append(CloudZoneDeletion(zoneID: zoneID, reason: reason))
            } else {
                changes.modifiedZoneIDs.append(zoneID)
            }
        }
        return changes
    }

    /// Where a page after a token starts: the token's position, or the log's start without one.
    ///
    /// - Throws: `CloudDatabaseError.changeTokenExpired(_:)` for a token of another generation of the log, or one
    ///   older than its horizon.
    private static func start(
        of token: CloudChangeToken?, for zoneID: CloudRecord.ZoneID?, in bounds: ChangeLogBounds
    ) throws -> Int {
        guard let token else { return bounds.start }
        let position = try ChangeLogPosition(token: token, for: zoneID)
        guard position.generation == bounds.generation, position.sequence >= bounds.horizon else {
            throw CloudDatabaseError.changeTokenExpired(zoneID)
        }
        return position.sequence
    }
}
