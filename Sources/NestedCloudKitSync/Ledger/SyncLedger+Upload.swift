import Foundation
import GRDB
import NestedCloudKitCodable

/// A pending change ready to send.
struct Upload: Sendable {
    /// The outbox entry, as it was when the change was read.
    var entry: OutboxEntry
    /// The record as the server will hold it once the change applies (with the engine's fields and the fields to
    /// clear), which an answer is compared with; `nil` for a deletion.
    var record: CloudRecord?
    /// What is sent of it: the fields that differ from the server's copy the change was made over, the fields to
    /// clear and the engine's edit times; all of it for a record the server hasn't had. `nil` for a deletion.
    var changes: CloudRecord?

    init(entry: OutboxEntry, record: CloudRecord?, changes: CloudRecord? = nil) {
        self.entry = entry
        self.record = record
        self.changes = changes ?? record
    }

    var key: UploadKey { UploadKey(id: entry.id, version: entry.version) }
}

/// One version of one record's change: what a sync has already tried to send.
struct UploadKey: Hashable, Sendable {
    var id: CloudRecord.ID
    var version: Int64
}

extension SyncLedger {
    /// The next changes to send, at most `limit`: saves before deletions; a save after the saves of the records it
    /// references; a deletion before the deletions of the records its record referenced, over the whole queue
    /// (``DeletionOrder``). `deletionReferences` are those read for an earlier batch; the ones read now come back.
    /// `queued` counts, in the same read, every change not halted: the sync's progress.
    func nextUploads(
        limit: Int, excluding attempted: Set<UploadKey>, deletionReferences: DeletionReferences = DeletionReferences()
    ) async throws -> (uploads: [Upload], deletionReferences: DeletionReferences, queued: Int) {
        try await read { db in
            let queued = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM ncs_outbox WHERE halted = 0"))
            let saves = try Self.nextSaves(limit: limit, excluding: attempted, in: db)
            if !saves.isEmpty { return (saves, deletionReferences, queued ?? 0) }
            let deletions = try DeletionOrder.next(
                limit: limit, excluding: attempted, cache: deletionReferences, in: db)
            return (deletions.uploads, deletions.deletionReferences, queued ?? 0)
        }
    }

    private static func pendingEntries(
        _ operation: OutboxEntry.Operation, excluding attempted: Set<UploadKey>, in db: Database,
        until enough: (OutboxEntry) throws -> Bool
    ) throws {
        let window = 256
        var offset = 0
        while true {
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM ncs_outbox WHERE halted = 0 AND operation = ? ORDER BY sequence LIMIT ? OFFSET ?
                    """,
                arguments: [operation.rawValue, window, offset])
            for row in rows {
                let entry = try StoreTables.outboxEntry(row)
                if attempted.contains(UploadKey(id: entry.id, version: entry.version)) { continue }
                if try enough(entry) { return }
            }
            if rows.count < window { return }
            offset += window
        }
    }

    private static func nextSaves(limit: Int, excluding attempted: Set<UploadKey>, in db: Database) throws
        -> [Upload]
    {
        var uploads: [Upload] = []
        var placed: Set<CloudRecord.ID> = []
        func place(_ entry: OutboxEntry, depth: Int) throws {
            guard uploads.count < limit, placed.insert(entry.id).inserted,
                let stored = try StoreTables.record(entry.id, in: db)
            else { return }
            // The records it references go first, so a `.validate` reference finds its target on the server.
            // Depth is bounded so a long chain can't exhaust the stack; what doesn't fit goes in a later batch.
            if depth < 32 {
                for target in stored.record.referencedRecordIDs where !placed.contains(target) {
                    guard let pending = try StoreTables.outboxEntry(target, in: db), pending.operation == .save,
                        !pending.halted, !attempted.contains(UploadKey(id: target, version: pending.version))
                    else { continue }
                    try place(pending, depth: depth + 1)
                }
            }
            if uploads.count < limit {
                let record = outgoing(stored)
                uploads.append(
                    Upload(entry: entry, record: record, changes: changes(in: record, over: stored.ancestor)))
            }
        }
        try pendingEntries(.save, excluding: attempted, in: db) { entry in
            try place(entry, depth: 0)
            return uploads.count >= limit
        }
        return uploads
    }

    /// The record as it goes to the server: its fields, the fields the server's copy has and it doesn't (to
    /// clear), the server's system fields and the engine's edit times.
    static func outgoing(_ stored: StoredRecord) -> CloudRecord {
        var record = stored.record
        if record.systemFields != nil, let ancestor = stored.ancestor {
            record.clearedFieldNames = ancestor.fields.names.filter { record[$0] == nil }
        } else {
            record.clearedFieldNames = []
        }
        return SyncMetadataFields.attach(
            to: record, editTime: stored.editTime, fieldTimes: stored.fieldEditTimes)
    }

    /// What of an outgoing record the server doesn't have yet: the fields whose values differ from the server's copy
    /// the change was made over, the fields to clear, and the engine's edit times. Sending only these (an update
    /// applies over the server's copy, which the change tag says is that one) costs what changed, not the record,
    /// and never writes back a field the app didn't touch: one a newer version of the app added, say.
    static func changes(in record: CloudRecord, over ancestor: CloudRecord?) -> CloudRecord {
        guard record.systemFields?.changeTag != nil, let ancestor else { return record }
        let server = SyncMetadataFields.split(ancestor).record
        var changes = record
        for (name, value) in record.fields
        where server[name] == value && !SyncMetadataFields.isMetadata(name)
            && server.encryptedFieldNames.contains(name) == record.encryptedFieldNames.contains(name)
        {
            // The fields themselves, not the record's subscript, which would note the field as one to clear.
            changes.fields[name] = nil
        }
        return changes
    }

    /// Notes that changes are about to be sent (``OutboxEntry/sent``).
    func markSent(_ uploads: [Upload]) async throws {
        try await write { db in try StoreTables.markSent(uploads, in: db) }
    }

    /// Records what the server acknowledged, in one transaction. A save leaves the outbox only if the record
    /// wasn't changed again since it was read; either way the record takes the server's system fields.
    func acknowledge(saved: [(Upload, CloudRecord)], deleted: [Upload]) async throws {
        let assets = assetFiles
        try await write { db in
            for (upload, server) in saved {
                try Self.acknowledgeSaved(upload, server: server, assets: assets, in: db)
            }
            for upload in deleted { try Self.acknowledgeDeleted(upload, in: db) }
        }
    }

    private static func acknowledgeSaved(
        _ upload: Upload, server: CloudRecord, assets: AssetFiles, in db: Database
    ) throws {
        let id = upload.entry.id
        let entry = try StoreTables.outboxEntry(id, in: db)
        let existing = try StoreTables.record(id, in: db)
        // The server's copy of what was sent: its assets are the store's copies of the same contents.
        let sent = upload.record.map { SyncMetadataFields.split($0).record }
        var returned = SyncMetadataFields.split(server).record
        if let sent {
            // Only the changes were sent, over the copy the server had: it now holds the whole record, whether or
            // not its answer repeats the fields that didn't change (CloudKit's framework answers with the record
            // that was sent).
            for (name, value) in sent.fields where returned.fields[name] == nil {
                returned.fields[name] = value
                if sent.encryptedFieldNames.contains(name) { returned.setEncrypted(true, fieldsNamed: [name]) }
            }
        }
        let copy = try assets.adopt(returned, reusing: [sent, existing?.record, existing?.ancestor].compactMap { $0 })
        if var stored = existing {
            stored.record.systemFields = server.systemFields
            stored.ancestor = copy
            let epoch = try zoneState(id.zoneID, in: db).epoch
            let version = try StoreTables.write(stored, epoch: epoch, in: db)
            guard let entry, entry.operation == .save else { return }
            if entry.version == upload.entry.version {
                try StoreTables.dequeue(id, in: db)
            } else {
                // Changed again while it was uploading: the newer version goes next, on the new change tag.
                try StoreTables.enqueue(
                    .save, id: id, recordType: stored.record.recordType, version: version, restartingTime: true, in: db)
            }
        } else {
            // Deleted locally while it was uploading: now the server has it, the deletion must follow.
            try StoreTables.enqueue(
                .delete, id: id, recordType: copy.recordType,
                version: entry?.version ?? StoreTables.nextCounter(in: db), ancestor: copy, restartingTime: true, in: db
            )
        }
    }

    private static func acknowledgeDeleted(_ upload: Upload, in db: Database) throws {
        let id = upload.entry.id
        guard let entry = try StoreTables.outboxEntry(id, in: db) else { return }
        if entry.operation == .delete, entry.version == upload.entry.version {
            try StoreTables.dequeue(id, in: db)
        } else if entry.operation == .save, var stored = try StoreTables.record(id, in: db) {
            // Saved again while the deletion was uploading: the record is created anew.
            stored.record.systemFields = nil
            stored.ancestor = nil
            let version = try StoreTables.write(stored, in: db)
            try StoreTables.enqueue(
                .save, id: id, recordType: stored.record.recordType, version: version, restartingTime: true, in: db)
        }
    }

    /// Writes a conflict's resolution; `false` if the record changed locally since `version` was read.
    func commitResolution(
        _ outcome: ConflictOutcome, server: CloudRecord, version: Int64
    ) async throws -> Bool {
        let assets = assetFiles
        return try await write { db in
            let id = server.id
            guard let stored = try StoreTables.record(id, in: db), stored.version == version,
                try StoreTables.outboxEntry(id, in: db)?.operation == .save
            else { return false }
            let held = [stored.record, stored.ancestor].compactMap { $0 }
            let copy = try assets.adopt(SyncMetadataFields.split(server).record, reusing: held)
            let written = try StoreTables.write(
                StoredRecord(
                    record: try assets.adopt(outcome.record, reusing: [copy] + held), ancestor: copy,
                    editTime: outcome.editTime, fieldEditTimes: outcome.fieldTimes, version: 0),
                epoch: try Self.zoneState(id.zoneID, in: db).epoch, in: db)
            if outcome.needsUpload {
                try StoreTables.enqueue(.save, id: id, recordType: server.recordType, version: written, in: db)
            } else {
                try StoreTables.dequeue(id, in: db)
            }
            return true
        }
    }

    /// The server holds an earlier upload of a record whose answer was lost, and the app changed the record since:
    /// the record takes that copy's system fields, so the newer change goes on top of it with no conflict.
    func adoptEarlierUpload(_ upload: Upload, server: CloudRecord) async throws {
        let assets = assetFiles
        try await write { db in
            let id = upload.entry.id
            guard var stored = try StoreTables.record(id, in: db),
                let entry = try StoreTables.outboxEntry(id, in: db), entry.operation == .save
            else { return }
            stored.record.systemFields = server.systemFields
            stored.ancestor = try assets.adopt(
                SyncMetadataFields.split(server).record,
                reusing: entry.sentCopies.reversed().map { SyncMetadataFields.split($0).record })
            let version = try StoreTables.write(stored, epoch: try Self.zoneState(id.zoneID, in: db).epoch, in: db)
            try StoreTables.enqueue(.save, id: id, recordType: stored.record.recordType, version: version, in: db)
        }
    }

    /// The server doesn't have a record a save updates: it was deleted there.
    func applyServerDeletion(_ id: CloudRecord.ID, deletePolicy: DeleteConflictPolicy) async throws -> FetchSummary {
        try await write { db in
            var summary = FetchSummary()
            try Self.applyServerDeletion(id, deletePolicy: deletePolicy, summary: &summary, in: db)
            return summary
        }
    }

    /// Puts the server's copy of a record back in place of a change the server refused for good (a share that no
    /// longer lets the user make it), and discards the change: the record as the server has it, or none if the
    /// server has none. Nothing happens if the record changed locally since the change was read: that newer change
    /// is sent, and answered, on its own.
    ///
    /// - Returns: Whether the change was discarded, and the record as the user had saved it (`nil` for a deletion).
    func revertRefusedChange(_ upload: Upload, toServerCopy server: CloudRecord?) async throws
        -> (reverted: Bool, discarded: CloudRecord?)
    {
        let assets = assetFiles
        return try await write { db in
            let id = upload.entry.id
            guard let entry = try StoreTables.outboxEntry(id, in: db), entry.version == upload.entry.version else {
                return (false, nil)
            }
            let stored = try StoreTables.record(id, in: db)
            try StoreTables.dequeue(id, in: db)
            // The server's copy is read and applied: a skip of it is over, and the user's next edit isn't halted.
            try Self.unskip(id, in: db)
            if let server {
                let split = SyncMetadataFields.split(server)
                let held = [stored?.record, stored?.ancestor, entry.ancestor].compactMap { $0 }
                let record = try assets.adopt(split.record, reusing: held)
                try StoreTables.write(
                    StoredRecord(
                        record: record, ancestor: record, editTime: split.editTime ?? stored?.editTime ?? 0,
                        fieldEditTimes: split.fieldTimes, version: 0),
                    epoch: try Self.registerZone(id.zoneID, in: db), in: db)
            } else if stored != nil {
                try StoreTables.deleteRecord(id, in: db)
            }
            return (true, stored?.record)
        }
    }

    /// Notes a failed upload; a halted change waits for the app.
    func recordUploadFailure(_ upload: Upload, error: CloudDatabaseError, halt: Bool) async throws {
        try await write { db in
            guard let entry = try StoreTables.outboxEntry(upload.entry.id, in: db),
                entry.version == upload.entry.version
            else { return }
            try StoreTables.recordFailure(upload.entry.id, error: error.description, halt: halt, in: db)
        }
    }

    /// A conflict the policy failed on: the change is halted and the server's copy listed as skipped, until the app
    /// calls ``SyncStore/retryHaltedChanges()``.
    func skipConflict(_ upload: Upload, reason: String) async throws {
        try await write { db in
            try StoreTables.recordFailure(upload.entry.id, error: reason, halt: true, in: db)
            try Self.skip(upload.entry.id, reason: reason, in: db)
        }
    }
}
