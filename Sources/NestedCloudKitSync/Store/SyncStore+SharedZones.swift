import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitRules

// Zones others share with the user: the store holds them under their owners' names, with the shares that cover
// them (fetched as records of type `cloudkit.share`), so it can tell what the user may change before a change is
// queued.

extension CloudRecord.ZoneID {
    /// Whether the zone is another user's, shared with this one: it syncs with the shared database.
    var isShared: Bool { ownerName != Self.currentUserOwnerName }
}

extension SyncStore {
    /// The records of a write by ID, for ``checkShareAllows(saving:id:batch:in:)``; empty when none is in a shared
    /// zone, so that a write to the user's own zones (nearly all of them) hashes nothing more. Only a record's
    /// parent and share are read from it, which the engine's own fields don't touch.
    static func sharedZoneBatch(_ records: [CloudRecord]) -> [CloudRecord.ID: CloudRecord] {
        guard records.contains(where: { $0.id.zoneID.isShared }) else { return [:] }
        return Dictionary(records.map { ($0.id, $0) }) { _, last in last }
    }

    /// Refuses an app's change to a record of a shared zone that the shares the store holds don't let the user
    /// make: a read-only share, a new record outside the shared hierarchy, a change to the share itself. Checked
    /// in the write's transaction, so a refused change leaves nothing queued. A zone whose shares the store hasn't
    /// fetched yet, or a store that doesn't know its user yet, leaves the decision to the server.
    ///
    /// - Parameters:
    ///   - record: The record to save; `nil` for a deletion of `id`.
    ///   - batch: The records saved in the same transaction, by ID (a new parent of a new child).
    static func checkShareAllows(
        saving record: CloudRecord?, id: CloudRecord.ID, batch: [CloudRecord.ID: CloudRecord] = [:], in db: Database
    ) throws {
        let zone = id.zoneID
        guard zone.isShared,
            let user = try StoreTables.state(SyncLedger.userKey, in: db).map({ String(decoding: $0, as: UTF8.self) })
        else { return }
        let shares = try StoreTables.records(ofType: CloudShare.recordType, in: zone, in: db).map(serverCopy)
        guard !shares.isEmpty else { return }
        if record?.recordType == CloudShare.recordType || shares.contains(where: { $0.id == id }) {
            throw SyncError.sharePermissionDenied(
                id, "only the share's owner changes it; a participant leaves it with SyncEngine.leaveShare(_:)")
        }
        let rules = LocalRecordStore(db: db)
        let permission =
            try record.map {
                try ShareAccess.permission(
                    of: user, forSaving: serverCopy($0), in: rules, shares: shares, batch: batch)
            } ?? ShareAccess.permission(of: user, on: id, in: rules, shares: shares)
        switch permission {
        case .readWrite?:
            return
        case .readOnly?, CloudShare.Permission.none?:
            throw SyncError.sharePermissionDenied(
                id, "\(zone.ownerName) shared it with \(user) read-only; ask them for read-write permission")
        case nil:
            throw SyncError.sharePermissionDenied(
                id,
                "no share \(user) accepted covers it: give a new record a parent the share covers (its `parentID`)")
        }
    }
}

extension CloudDatabaseError {
    /// Whether the server refused the change for the user's permission.
    var isPermissionFailure: Bool {
        if code == .permissionFailure { true } else { false }
    }
}
