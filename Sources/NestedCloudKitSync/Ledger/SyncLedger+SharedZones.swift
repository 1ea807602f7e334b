import GRDB
import NestedCloudKitCodable

extension SyncLedger {
    /// The shared zones the store holds or was told of, by name.
    func sharedZones() async throws -> [CloudRecord.ZoneID] {
        try await zonesWithData().filter(\.isShared)
    }

    /// The user lost access to a shared zone: its local copy goes, with the changes queued for it, which can't
    /// reach its owner any more and are never uploaded anywhere else.
    ///
    /// - Returns: How many changes were queued.
    func removeSharedZone(_ zoneID: CloudRecord.ZoneID) async throws -> Int {
        try await write { db in try Self.removeSharedZone(zoneID, in: db) }
    }

    private static func removeSharedZone(_ zoneID: CloudRecord.ZoneID, in db: Database) throws -> Int {
        let queued =
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM ncs_outbox WHERE zone_owner = ? AND zone_name = ?",
                arguments: [zoneID.ownerName, zoneID.zoneName]) ?? 0
        try deleteLocalData(in: zoneID, db: db)
        return queued
    }

    /// Applies a page of the shared database's changes with the token that covers it, in one transaction: the
    /// zones the user lost go (their local copies and queued changes), the changed ones are to fetch. So a loss is
    /// never behind the stored token without its local copy gone.
    ///
    /// - Returns: Each zone removed, with how many changes were queued for it.
    func applySharedDatabaseChanges(
        lost: [CloudRecord.ZoneID], changedZones: [CloudRecord.ZoneID], token: CloudChangeToken
    ) async throws -> [(zoneID: CloudRecord.ZoneID, discarded: Int)] {
        try await write { db in
            var removed: [(zoneID: CloudRecord.ZoneID, discarded: Int)] = []
            for zoneID in lost { removed.append((zoneID, try Self.removeSharedZone(zoneID, in: db))) }
            for zoneID in changedZones {
                var state = try Self.zoneState(zoneID, in: db)
                state.needsFetch = true
                try Self.setZoneState(zoneID, state, in: db)
            }
            try StoreTables.setState(Self.databaseTokenKey(.shared), token.data, in: db)
            return removed
        }
    }
}
