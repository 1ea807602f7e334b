import GRDB
import NestedCloudKitCodable

/// The records each pending deletion's record referenced when the server last had it, by the version of the
/// deletion: read from the queue once a sync, as each batch orders every pending deletion again.
struct DeletionReferences: Sendable {
    var targets: [UploadKey: [CloudRecord.ID]] = [:]
}

/// The order pending deletions go to the server in: a record's deletion before the deletions of the records it
/// referenced (holders before what they hold), over the whole queue, so that a `.validate` reference never makes
/// the server refuse a deletion, within a batch or across batches, however small the batches. Among deletions that
/// don't hold each other, the order they were made in. A cycle of references (which CloudKit itself can't delete
/// one record at a time) is broken at its oldest deletion.
enum DeletionOrder {
    /// One pending deletion: its change and where it stands in the order deletions were made.
    struct Pending: Sendable {
        var key: UploadKey
        var sequence: Int64
    }

    /// `pending`, in the order deletions were made, sorted holders first; `references` gives each one's targets.
    static func sorted(_ pending: [Pending], references: [UploadKey: [CloudRecord.ID]]) -> [UploadKey] {
        let ids = Set(pending.map(\.key.id))
        var holders: [CloudRecord.ID: Int] = [:]
        var targets: [CloudRecord.ID: Set<CloudRecord.ID>] = [:]
        for change in pending {
            let held = Set(references[change.key] ?? []).subtracting([change.key.id]).intersection(ids)
            targets[change.key.id] = held
            for target in held { holders[target, default: 0] += 1 }
        }
        var heldBy: [CloudRecord.ID: [Pending]] = [:]
        for change in pending {
            for target in targets[change.key.id] ?? [] { heldBy[target, default: []].append(change) }
        }
        var order: [UploadKey] = []
        order.reserveCapacity(pending.count)
        var placed = Set<CloudRecord.ID>()
        func place(_ change: Pending) {
            order.append(change.key)
            placed.insert(change.key.id)
            for target in targets[change.key.id] ?? [] { holders[target, default: 0] -= 1 }
        }
        // Passes over the queue in order: each places what nothing unplaced holds any more. A pass that places
        // nothing is a cycle, broken at its oldest deletion.
        while order.count < pending.count {
            let before = order.count
            for change in pending where !placed.contains(change.key.id) && holders[change.key.id, default: 0] <= 0 {
                place(change)
            }
            if order.count == before, let oldest = pending.first(where: { !placed.contains($0.key.id) }) {
                place(oldestInCycle(from: oldest, heldBy: heldBy, placed: placed))
            }
        }
        return order
    }

    /// The oldest deletion of a cycle the holders of `start` lead to: when every deletion left has a holder left,
    /// following holders from any of them comes back round to one already passed.
    private static func oldestInCycle(
        from start: Pending, heldBy: [CloudRecord.ID: [Pending]], placed: Set<CloudRecord.ID>
    ) -> Pending {
        var path: [Pending] = []
        var seen: [CloudRecord.ID: Int] = [:]
        var current = start
        while seen[current.key.id] == nil {
            seen[current.key.id] = path.count
            path.append(current)
            guard let holder = heldBy[current.key.id]?.first(where: { !placed.contains($0.key.id) }) else {
                return current
            }
            current = holder
        }
        let cycle = path[(seen[current.key.id] ?? 0)...]
        return cycle.min { $0.sequence < $1.sequence } ?? start
    }

    /// The next deletions to send, at most `limit`, in order: every pending deletion (but halted ones) sorted, and
    /// the first that this sync hasn't tried. `cache` holds the references already read; the new cache is
    /// returned with the batch.
    static func next(
        limit: Int, excluding attempted: Set<UploadKey>, cache: DeletionReferences, in db: Database
    ) throws -> (uploads: [Upload], deletionReferences: DeletionReferences) {
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT zone_owner, zone_name, record_name, version, sequence FROM ncs_outbox
                    WHERE halted = 0 AND operation = 'delete' ORDER BY sequence
                    """))
        var pending: [Pending] = []
        pending.reserveCapacity(rows.count)
        var references = DeletionReferences()
        for row in rows {
            let zone = CloudRecord.ZoneID(zoneName: row["zone_name"], ownerName: row["zone_owner"])
            let key = UploadKey(
                id: CloudRecord.ID(recordName: row["record_name"], zoneID: zone), version: row["version"])
            pending.append(Pending(key: key, sequence: row["sequence"]))
            if let known = cache.targets[key] {
                references.targets[key] = known
            } else {
                references.targets[key] =
                    try StoreTables.outboxEntry(key.id, in: db)?.ancestor?.referencedRecordIDs ?? []
            }
        }
        var uploads: [Upload] = []
        for key in sorted(pending, references: references.targets) where !attempted.contains(key) {
            guard uploads.count < limit else { break }
            if let entry = try StoreTables.outboxEntry(key.id, in: db) {
                uploads.append(Upload(entry: entry, record: nil))
            }
        }
        return (uploads, references)
    }
}
