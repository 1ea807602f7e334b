import GRDB
import NestedCloudKitCodable
import NestedCloudKitRules

/// The rule that keeps `.deleteSelf` references whole: after a sync, no record holds a `.deleteSelf` reference to a
/// record that exists nowhere, since CloudKit deletes such a holder with its target, edit or no edit.
///
/// When a deletion meets an edit through such a reference (one device deletes a folder, another edits or adds an
/// item in it), the delete-conflict policy decides, as it does for a deletion against an edit of the record itself:
/// - ``DeleteConflictPolicy/editWins``: the target comes back (saved again if the server deleted it, its local
///   deletion cancelled if it hadn't reached the server), so the edited item survives in its folder;
///   ``ConflictResolution/Decision/restoredForReference(from:)``.
/// - ``DeleteConflictPolicy/deleteWins``: the item goes with its target, its changes dropped;
///   ``ConflictResolution/Decision/deletedWithTarget(_:)``.
///
/// Applied the same way whichever came first: a deletion fetched from the server (another device deleted the
/// target), or a record fetched that references a target this device deleted and hasn't sent yet.
extension SyncLedger {
    /// The `.deleteSelf` targets of a record, in its zone.
    static func deleteSelfTargets(of record: CloudRecord) -> [CloudRecord.ID] {
        DeleteSelfCascade.targets(of: record).filter { $0.zoneID == record.id.zoneID }
    }

    /// The record with a pending save (an edit, a new record) that needs `id` to exist, through a chain of
    /// `.deleteSelf` references to it; `nil` if none does.
    static func pendingHolder(needing id: CloudRecord.ID, in db: Database) throws -> CloudRecord.ID? {
        var found: CloudRecord.ID?
        try DeleteSelfCascade.walk(from: [id], holders: { try StoreTables.referenceHolders(of: $0, in: db) }) {
            holder in
            guard holder != id, try StoreTables.outboxEntry(holder, in: db)?.operation == .save else { return .descend }
            found = holder
            return .stop
        }
        return found
    }

    /// Deletes the records that hold `.deleteSelf` references to a record the server deleted, as the server does:
    /// those without local changes quietly, those with a pending save by the delete policy's rule (only
    /// ``DeleteConflictPolicy/deleteWins`` gets here with one: under `.editWins` the target was kept).
    static func cascadeServerDeletion(
        of target: CloudRecord.ID, summary: inout FetchSummary, in db: Database
    ) throws {
        var deleted: [CloudRecord.ID] = []
        var resolutions: [ConflictResolution] = []
        try DeleteSelfCascade.walk(from: [target], holders: { try StoreTables.referenceHolders(of: $0, in: db) }) {
            holder in
            guard holder != target else { return .descend }
            let entry = try StoreTables.outboxEntry(holder, in: db)
            if entry?.operation == .delete { return .skip }
            try StoreTables.deleteRecord(holder, in: db)
            deleted.append(holder)
            if entry?.operation == .save {
                // Its changes go with it: the server deleted its target, and with it whatever copy it had.
                try StoreTables.dequeue(holder, in: db)
                resolutions.append(ConflictResolution(recordID: holder, decision: .deletedWithTarget(target)))
            }
            return .descend
        }
        summary.deleted += deleted
        summary.resolutions += resolutions
    }

    /// After a fetched record was written locally: the targets of its `.deleteSelf` references that this device
    /// deleted and hasn't sent yet come back (``DeleteConflictPolicy/editWins``), or the record goes with them
    /// (``DeleteConflictPolicy/deleteWins``).
    static func keepTargetsOfFetchedRecord(
        _ id: CloudRecord.ID, deletePolicy: DeleteConflictPolicy, summary: inout FetchSummary, in db: Database
    ) throws {
        var pending = [id]
        var seen: Set<CloudRecord.ID> = []
        while let holder = pending.popLast() {
            guard seen.insert(holder).inserted, let stored = try StoreTables.record(holder, in: db) else { continue }
            for target in deleteSelfTargets(of: stored.record) {
                guard try StoreTables.record(target, in: db) == nil,
                    let entry = try StoreTables.outboxEntry(target, in: db), entry.operation == .delete
                else { continue }
                switch deletePolicy {
                case .editWins:
                    try restore(target, from: entry, in: db)
                    summary.saved.append(target)
                    summary.resolutions.append(
                        ConflictResolution(recordID: target, decision: .restoredForReference(from: holder)))
                    // Its own targets may have been deleted with it.
                    pending.append(target)
                case .deleteWins:
                    for deleted in try SyncStore.applyLocalDeletes([holder], in: db) {
                        summary.deleted.append(deleted)
                        summary.resolutions.append(
                            ConflictResolution(recordID: deleted, decision: .deletedWithTarget(target)))
                    }
                }
                if deletePolicy == .deleteWins { break }
            }
        }
    }

    /// Cancels a pending deletion that hasn't reached the server: the record comes back as the server holds it (the
    /// copy the deletion remembered); a copy the server may not have (the deletion came with a save pending, or the
    /// record never reached the server) comes back as a change to send.
    private static func restore(_ id: CloudRecord.ID, from entry: OutboxEntry, in db: Database) throws {
        guard let copy = entry.ancestor else {
            try StoreTables.dequeue(id, in: db)
            return
        }
        let split = SyncMetadataFields.split(copy)
        // The engine's fields are on a copy as it was sent, never on the server's copy as it was fetched.
        let serversCopy = split.record.systemFields != nil && split.editTime == nil
        let version = try StoreTables.write(
            StoredRecord(
                record: split.record, ancestor: serversCopy ? split.record : nil, editTime: split.editTime ?? 0,
                fieldEditTimes: split.fieldTimes, version: 0),
            epoch: try registerZone(id.zoneID, in: db), in: db)
        if serversCopy {
            try StoreTables.dequeue(id, in: db)
        } else {
            try StoreTables.enqueue(.save, id: id, recordType: split.record.recordType, version: version, in: db)
        }
    }
}
