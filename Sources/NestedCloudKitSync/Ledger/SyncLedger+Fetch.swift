import Foundation
import GRDB
import NestedCloudKitCodable

/// A record's local row and pending change, read before a fetched page's conflicts are resolved.
struct LocalState: Sendable {
    var stored: StoredRecord?
    var outbox: OutboxEntry?

    /// Whether a fetched server copy conflicts with local changes: the server's copy isn't the one the local changes
    /// were made on, nor one this device sent.
    func conflicts(with server: CloudRecord) -> Bool {
        guard let stored, outbox?.operation == .save,
            server.systemFields?.changeTag != stored.record.systemFields?.changeTag
        else { return false }
        return !isPendingSave(server) && !isEarlierUpload(server)
    }

    /// Whether the server's copy is exactly the pending save (edit times included): our own upload whose answer
    /// was lost (a crash, a dropped connection), not another device's change.
    func isPendingSave(_ server: CloudRecord) -> Bool {
        guard let stored, outbox?.operation == .save else { return false }
        return AssetFiles.sameContents(server.fields, SyncLedger.outgoing(stored).fields)
    }

    /// Whether the server's copy is an earlier version this device sent without getting an answer, with newer local
    /// edits on top: still our own write, so the newer edits go on top of it, with no conflict.
    func isEarlierUpload(_ server: CloudRecord) -> Bool {
        guard let outbox, outbox.operation == .save else { return false }
        return outbox.isSentCopy(server)
    }
}

/// A page of changes fetched from a zone, as the store applies it.
struct FetchedPage: Sendable {
    var zoneID: CloudRecord.ZoneID
    var modifications: [CloudRecord] = []
    var deletions: [CloudRecord.ID] = []
    /// Records the page changed that can't be applied (the server couldn't give them, or the conflict policy
    /// failed on them), with why: left as they are locally, listed until the app asks for them again.
    var skipped: [CloudRecord.ID: String] = [:]
    /// The zone's change token after the page; `nil` for a zone without tokens, or records fetched by ID.
    var token: CloudChangeToken?
    /// For a zone without tokens: the latest modification date the page holds.
    var modifiedAfter: Date?
    /// Whether the page is the zone's last: the zone is fetched to its end.
    var finished = false
}

/// What applying fetched changes did to the local store.
struct FetchSummary: Sendable {
    var saved: [CloudRecord.ID] = []
    var deleted: [CloudRecord.ID] = []
    var resolutions: [ConflictResolution] = []

    mutating func add(_ other: FetchSummary) {
        saved += other.saved
        deleted += other.deleted
        resolutions += other.resolutions
    }

    /// Lists each record once, as what the store holds at the end: a record saved and then deleted (or the other
    /// way round) in one transaction is reported by its final state.
    mutating func settle(in db: Database) throws {
        var seen: Set<CloudRecord.ID> = []
        var (present, gone): ([CloudRecord.ID], [CloudRecord.ID]) = ([], [])
        for id in saved + deleted where seen.insert(id).inserted {
            if try StoreTables.contains(id, in: db) { present.append(id) } else { gone.append(id) }
        }
        (saved, deleted) = (present, gone)
    }
}

extension SyncLedger {
    /// The local state of the records among `ids` that have a pending change: only those can conflict.
    func pendingStates(_ ids: [CloudRecord.ID]) async throws -> [CloudRecord.ID: LocalState] {
        try await read { db in
            guard try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ncs_outbox") ?? 0 > 0 else { return [:] }
            var states: [CloudRecord.ID: LocalState] = [:]
            for id in ids {
                guard let entry = try StoreTables.outboxEntry(id, in: db) else { continue }
                states[id] = LocalState(stored: try StoreTables.record(id, in: db), outbox: entry)
            }
            return states
        }
    }

    func localStates(_ ids: [CloudRecord.ID]) async throws -> [CloudRecord.ID: LocalState] {
        try await read { db in
            var states: [CloudRecord.ID: LocalState] = [:]
            for id in ids {
                states[id] = LocalState(
                    stored: try StoreTables.record(id, in: db), outbox: try StoreTables.outboxEntry(id, in: db))
            }
            return states
        }
    }

    /// Applies a page of fetched changes and the token that covers them, in one transaction.
    ///
    /// - Parameters:
    ///   - outcomes: The resolutions of the conflicts the page holds, computed from `versions`.
    ///   - versions: The local versions the resolutions were computed from.
    /// - Returns: What changed locally, or `nil` if a local write changed a conflicting record since the
    ///   resolutions were computed: nothing was written, and the caller resolves again.
    func commitFetched(
        _ page: FetchedPage, outcomes: [CloudRecord.ID: ConflictOutcome], versions: [CloudRecord.ID: Int64],
        deletePolicy: DeleteConflictPolicy
    ) async throws -> FetchSummary? {
        do {
            return try await commitFetchedOrThrow(
                page, outcomes: outcomes, versions: versions, deletePolicy: deletePolicy)
        } catch is StaleResolution {
            return nil
        }
    }

    private func commitFetchedOrThrow(
        _ page: FetchedPage, outcomes: [CloudRecord.ID: ConflictOutcome], versions: [CloudRecord.ID: Int64],
        deletePolicy: DeleteConflictPolicy
    ) async throws -> FetchSummary {
        let assets = assetFiles
        return try await write { db in
            var summary = FetchSummary()
            let zone = try Self.zoneState(page.zoneID, in: db)
            // A record applied now is no longer skipped; looked for only when some are.
            let someSkipped = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM ncs_skipped)") ?? false
            for server in page.modifications {
                guard
                    try Self.applyFetched(
                        server, outcome: outcomes[server.id], version: versions[server.id], epoch: zone.epoch,
                        deletePolicy: deletePolicy, assets: assets, summary: &summary, in: db)
                else {
                    // Abandons the transaction: a local write came in between.
                    throw StaleResolution()
                }
                if someSkipped { try Self.unskip(server.id, in: db) }
            }
            for id in page.deletions {
                try Self.applyServerDeletion(id, deletePolicy: deletePolicy, summary: &summary, in: db)
                if someSkipped { try Self.unskip(id, in: db) }
            }
            for (id, reason) in page.skipped { try Self.skip(id, reason: reason, in: db) }
            // Fetched records whose `.deleteSelf` targets this device deleted and hasn't sent yet: none without a
            // pending deletion (the walk acts only on one), which spares reading back every record of a first sync.
            for id in try StoreTables.hasPendingDeletions(in: db) ? summary.saved : [] {
                try Self.keepTargetsOfFetchedRecord(id, deletePolicy: deletePolicy, summary: &summary, in: db)
            }
            try summary.settle(in: db)
            var state = zone
            if let token = page.token { state.token = token }
            if let modifiedAfter = page.modifiedAfter {
                state.modifiedAfter = max(modifiedAfter, state.modifiedAfter ?? modifiedAfter)
            }
            if page.finished { state.needsFetch = false }
            try Self.setZoneState(page.zoneID, state, in: db)
            return summary
        }
    }

    /// A fetched record and what the store has of it, as the writes of ``applyFetched`` need them.
    private struct FetchedChange {
        /// The record as fetched, with the engine's metadata fields.
        var fetched: CloudRecord
        /// The record without the engine's fields, its assets in the store's own copies.
        var server: CloudRecord
        /// The row the record becomes when the server's copy simply replaces the local one.
        var synced: StoredRecord
        var state: LocalState
        /// The local records whose asset copies the fetched record may reuse.
        var held: [CloudRecord]
        var epoch: Int64

        var id: CloudRecord.ID { fetched.id }
    }

    /// Writes one fetched record; `false` if its conflict must be resolved again.
    private static func applyFetched(
        _ fetched: CloudRecord, outcome: ConflictOutcome?, version: Int64?, epoch: Int64,
        deletePolicy: DeleteConflictPolicy, assets: AssetFiles, summary: inout FetchSummary, in db: Database
    ) throws -> Bool {
        let split = SyncMetadataFields.split(fetched)
        let id = fetched.id
        let state = LocalState(
            stored: try StoreTables.record(id, in: db), outbox: try StoreTables.outboxEntry(id, in: db))
        // A fetched asset's file belongs to the database's cache: the store keeps a copy of its own, the one it has
        // already when the contents are the same (our own upload fetched back, a record whose asset didn't change).
        let held = [state.stored?.record, state.stored?.ancestor].compactMap { $0 }
        let server = try assets.adopt(split.record, reusing: held)
        let synced = StoredRecord(
            record: server, ancestor: server, editTime: split.editTime ?? state.stored?.editTime ?? 0,
            fieldEditTimes: split.fieldTimes, version: 0)
        let change = FetchedChange(
            fetched: fetched, server: server, synced: synced, state: state, held: held, epoch: epoch)
        switch (state.stored, state.outbox?.operation) {
        case (nil, .delete?):
            try applyOverPendingDeletion(change, deletePolicy: deletePolicy, summary: &summary, in: db)
            return true
        case (let stored?, .save?):
            return try applyOverPendingSave(
                change, stored: stored, outcome: outcome, version: version, assets: assets, summary: &summary,
                in: db)
        default:
            try applyOverUnchanged(change, summary: &summary, in: db)
            return true
        }
    }

    /// A fetched record the store has a pending deletion of: our own earlier upload fetched back, or a conflict
    /// the delete policy decides.
    private static func applyOverPendingDeletion(
        _ change: FetchedChange, deletePolicy: DeleteConflictPolicy, summary: inout FetchSummary, in db: Database
    ) throws {
        let (id, server, state) = (change.id, change.server, change.state)
        if let entry = state.outbox,
            entry.ancestor?.systemFields?.changeTag == server.systemFields?.changeTag
                || entry.ancestor.map({ AssetFiles.sameContents($0.fields, change.fetched.fields) }) == true
                || entry.isSentCopy(change.fetched)
        {
            // The copy the pending deletion deletes (our own earlier upload, fetched back, maybe one whose
            // answer was lost): no conflict; the deletion now knows the server's copy.
            try StoreTables.enqueue(
                .delete, id: id, recordType: server.recordType, version: state.outbox?.version ?? 0,
                ancestor: server, in: db)
            return
        }
        if deletePolicy == .deleteWins {
            try StoreTables.enqueue(
                .delete, id: id, recordType: server.recordType, version: state.outbox?.version ?? 0,
                ancestor: server, in: db)
            summary.resolutions.append(ConflictResolution(recordID: id, decision: .keptLocalDeletion))
        } else {
            try StoreTables.dequeue(id, in: db)
            try StoreTables.write(change.synced, epoch: change.epoch, in: db)
            summary.saved.append(id)
            summary.resolutions.append(ConflictResolution(recordID: id, decision: .restoredFromServer))
        }
    }

    /// A fetched record the store has a pending save of: our own upload whose answer was lost, an earlier upload
    /// the local edits go on top of, or a conflict resolved by `outcome`; `false` if the record changed since
    /// `outcome` was made from it.
    private static func applyOverPendingSave(
        _ change: FetchedChange, stored: StoredRecord, outcome: ConflictOutcome?, version: Int64?,
        assets: AssetFiles, summary: inout FetchSummary, in db: Database
    ) throws -> Bool {
        let (id, server, state) = (change.id, change.server, change.state)
        var stored = stored
        if state.isPendingSave(change.fetched) {
            // Acknowledged now: the answer to the upload was lost.
            stored.record.systemFields = server.systemFields
            stored.ancestor = server
            try StoreTables.write(stored, epoch: change.epoch, in: db)
            try StoreTables.dequeue(id, in: db)
            return true
        }
        if state.isEarlierUpload(change.fetched) {
            // An earlier upload whose answer was lost, with newer local edits on top: they go on top of it.
            stored.record.systemFields = server.systemFields
            stored.ancestor = server
            let written = try StoreTables.write(stored, epoch: change.epoch, in: db)
            try StoreTables.enqueue(.save, id: id, recordType: server.recordType, version: written, in: db)
            return true
        }
        guard state.conflicts(with: change.fetched) else {
            try markSeen(id, epoch: change.epoch, in: db)
            return true
        }
        guard let outcome, version == stored.version else { return false }
        let kept = try assets.adopt(outcome.record, reusing: [server] + change.held)
        let written = try StoreTables.write(
            StoredRecord(
                record: kept, ancestor: server, editTime: outcome.editTime, fieldEditTimes: outcome.fieldTimes,
                version: 0),
            epoch: change.epoch, in: db)
        if outcome.needsUpload {
            try StoreTables.enqueue(.save, id: id, recordType: server.recordType, version: written, in: db)
        } else {
            try StoreTables.dequeue(id, in: db)
        }
        summary.saved.append(id)
        summary.resolutions.append(ConflictResolution(recordID: id, decision: outcome.decision))
        return true
    }

    /// A fetched record without a pending change: the server's copy replaces the local one, or only marks it seen
    /// when it is the same.
    private static func applyOverUnchanged(
        _ change: FetchedChange, summary: inout FetchSummary, in db: Database
    ) throws {
        if let stored = change.state.stored,
            stored.record.systemFields?.changeTag == change.server.systemFields?.changeTag,
            stored.record.fields == change.server.fields
        {
            try markSeen(change.id, epoch: change.epoch, in: db)
        } else {
            try StoreTables.write(change.synced, epoch: change.epoch, in: db)
            summary.saved.append(change.id)
        }
    }

    /// Applies the server's deletion of a record, and the `.deleteSelf` rule (``keepTargetsOfFetchedRecord``'s
    /// extension): a record an edited or new local record needs comes back under `.editWins`; under `.deleteWins`,
    /// and for holders without local changes, its holders go with it as they did on the server.
    static func applyServerDeletion(
        _ id: CloudRecord.ID, deletePolicy: DeleteConflictPolicy, summary: inout FetchSummary, in db: Database
    ) throws {
        let stored = try StoreTables.record(id, in: db)
        let entry = try StoreTables.outboxEntry(id, in: db)
        switch entry?.operation {
        case .save?:
            guard var stored else {
                try StoreTables.dequeue(id, in: db)
                return
            }
            if stored.ancestor == nil, stored.record.systemFields == nil {
                // A record this device created and never uploaded: the deletion is of another device's record
                // with the same name, not of this one.
                return
            }
            if deletePolicy == .deleteWins {
                try StoreTables.deleteRecord(id, in: db)
                try StoreTables.dequeue(id, in: db)
                summary.deleted.append(id)
                summary.resolutions.append(ConflictResolution(recordID: id, decision: .deletedWithServer))
                try cascadeServerDeletion(of: id, summary: &summary, in: db)
            } else {
                try saveAgain(&stored, in: db)
                summary.resolutions.append(ConflictResolution(recordID: id, decision: .recreatedFromClient))
            }
        case .delete?:
            try StoreTables.dequeue(id, in: db)
            try cascadeServerDeletion(of: id, summary: &summary, in: db)
        case nil:
            guard var stored else { return try cascadeServerDeletion(of: id, summary: &summary, in: db) }
            if deletePolicy == .editWins, let holder = try pendingHolder(needing: id, in: db) {
                // An edited or new record holds a `.deleteSelf` reference to it (maybe through others): it stays,
                // saved again, so the edit isn't deleted with it.
                try saveAgain(&stored, in: db)
                summary.resolutions.append(
                    ConflictResolution(recordID: id, decision: .restoredForReference(from: holder)))
            } else {
                try StoreTables.deleteRecord(id, in: db)
                summary.deleted.append(id)
                try cascadeServerDeletion(of: id, summary: &summary, in: db)
            }
        }
    }

    /// Queues a record the server no longer has to be created again from the local copy.
    private static func saveAgain(_ stored: inout StoredRecord, in db: Database) throws {
        stored.record.systemFields = nil
        stored.ancestor = nil
        let version = try StoreTables.write(stored, in: db)
        try StoreTables.enqueue(.save, id: stored.id, recordType: stored.record.recordType, version: version, in: db)
    }

    private static func markSeen(_ id: CloudRecord.ID, epoch: Int64, in db: Database) throws {
        try db.cachedStatement(
            sql: "UPDATE ncs_record SET fetch_epoch = ? WHERE zone_owner = ? AND zone_name = ? AND record_name = ?"
        ).execute(arguments: [epoch, id.zoneID.ownerName, id.zoneID.zoneName, id.recordName])
    }

    /// Marks records as present on the server, for a comparison of the full set (zones without change tokens).
    func markSeen(_ ids: [CloudRecord.ID], in zoneID: CloudRecord.ZoneID) async throws {
        try await write { db in
            let epoch = try Self.zoneState(zoneID, in: db).epoch
            for id in ids { try Self.markSeen(id, epoch: epoch, in: db) }
        }
    }

    /// Starts a fetch of everything in a zone: the token is forgotten, and records the fetch doesn't see are
    /// deleted by ``reconcileAfterFullFetch(of:deletePolicy:)``.
    func beginFullFetch(of zoneID: CloudRecord.ZoneID) async throws {
        try await updateZoneState(zoneID) { state in
            state.token = nil
            state.epoch += 1
            state.reconcilePending = true
        }
    }

    /// After a full fetch: the records that were on the server but aren't any more are deleted locally, unless
    /// the delete policy keeps a local edit; records that never reached the server stay.
    ///
    /// - Parameter recordTypes: For a zone checked type by type (no change tokens): the types the check listed;
    ///   records of other types weren't looked for, so they aren't taken for gone.
    func reconcileAfterFullFetch(
        of zoneID: CloudRecord.ZoneID, recordTypes: [String]? = nil, deletePolicy: DeleteConflictPolicy
    ) async throws -> FetchSummary {
        try await write { db in
            var state = try Self.zoneState(zoneID, in: db)
            let gone = try Row.fetchAll(
                try db.cachedStatement(
                    sql: """
                        SELECT record_name, record_type FROM ncs_record
                        WHERE zone_owner = ? AND zone_name = ? AND fetch_epoch < ? AND ancestor IS NOT NULL
                        """), arguments: [zoneID.ownerName, zoneID.zoneName, state.epoch]
            )
            .filter { row in recordTypes.map { $0.contains(row["record_type"]) } ?? true }
            .map { CloudRecord.ID(recordName: $0["record_name"], zoneID: zoneID) }
            var summary = FetchSummary()
            for id in gone {
                try Self.applyServerDeletion(id, deletePolicy: deletePolicy, summary: &summary, in: db)
            }
            state.lastFullCheck = self.clock.now()
            state.reconcilePending = false
            try Self.setZoneState(zoneID, state, in: db)
            return summary
        }
    }
}

/// A local write changed a record between the resolution of its conflict and the commit.
struct StaleResolution: Error {}
