import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitRules

extension SyncStore {
    /// Writes one record the app saved and queues it; `false` if it holds what the store already has.
    ///
    /// - Parameters:
    ///   - batch: The records saved in the same transaction, by ID: a new child in a shared zone is allowed through a
    ///     new parent saved with it.
    ///   - keepingUnmappedFields: Whether the record is a model's encoding, which lists the fields the model cleared
    ///     (``CloudRecord/clearedFieldNames``): a field of the stored record that it neither holds nor clears is one
    ///     the model doesn't map, and stays. Otherwise the record's fields replace the stored ones.
    static func applyLocalSave(
        _ incoming: CloudRecord, at now: Int64, assets: AssetFiles, batch: [CloudRecord.ID: CloudRecord] = [:],
        keepingUnmappedFields: Bool = false, in db: Database
    ) throws -> Bool {
        var record = SyncMetadataFields.split(incoming).record
        let existing = try StoreTables.record(record.id, in: db)
        if keepingUnmappedFields, let existing {
            try checkModelVersion(record.schemaVersion ?? 0, canWrite: existing.record)
            record.keepFieldsUnmapped(by: record.clearedFieldNames, of: existing.record)
        }
        record.clearedFieldNames = []
        if let existing { record.followParentField(of: existing.record) }
        if let existing, let readAt = incoming.systemFields?.changeTag {
            record = try mergedWithNewerServerCopy(record, readAt: readAt, stored: existing, in: db)
        }
        // An asset with the contents the store holds keeps the store's copy: saving a model again changes nothing.
        record = try assets.adopt(record, reusing: [existing?.record, existing?.ancestor].compactMap { $0 })
        if var stored = existing {
            let edits = RecordEdits(from: stored.record, to: record)
            guard !edits.isEmpty || stored.record.recordType != record.recordType else { return false }
            try checkShareAllows(saving: record, id: record.id, batch: batch, in: db)
            record.systemFields = stored.record.systemFields
            // A cleared field keeps its time too: a merge must know that clearing it was the newer change.
            for name in edits.fieldNames { stored.fieldEditTimes[name] = now }
            stored.record = record
            stored.editTime = now
            let version = try StoreTables.write(
                stored, epoch: try SyncLedger.registerZone(record.id.zoneID, in: db), in: db)
            try StoreTables.enqueue(
                .save, id: record.id, recordType: record.recordType, version: version, keepingSentCopies: true, in: db)
        } else {
            try checkShareAllows(saving: record, id: record.id, batch: batch, in: db)
            // Saved again after a delete that hasn't reached the server: the save updates the server's copy,
            // so that the delete and the new record don't race (and the delete alone doesn't win).
            let pending = try StoreTables.outboxEntry(record.id, in: db)
            let ancestor = pending?.operation == .delete ? pending?.ancestor.map(serverCopy) : nil
            record.systemFields = ancestor?.systemFields
            let times = Dictionary(record.fields.names.map { ($0, now) }, uniquingKeysWith: { first, _ in first })
            // The zone's current epoch: a record written during a full fetch isn't taken for one the server lost.
            let epoch = try SyncLedger.registerZone(record.id.zoneID, in: db)
            let version = try StoreTables.write(
                StoredRecord(record: record, ancestor: ancestor, editTime: now, fieldEditTimes: times, version: 0),
                epoch: epoch, in: db)
            try StoreTables.enqueue(
                .save, id: record.id, recordType: record.recordType, version: version, keepingSentCopies: true, in: db)
        }
        return true
    }

    /// Refuses a save by a model whose layout version (`cloudKitSchemaVersion`) is older than the one that wrote
    /// the stored record: the newer version's fields may mean what this one can't know, so the record stays intact.
    static func checkModelVersion(_ modelVersion: Int, canWrite stored: CloudRecord) throws {
        let recordVersion = stored.schemaVersion ?? 0
        guard recordVersion <= modelVersion else {
            throw SyncError.recordFromNewerVersion(stored.id, recordVersion: recordVersion, modelVersion: modelVersion)
        }
    }

    /// A record saved from a model read before the server's copy changed (its system fields name an older
    /// change tag), merged against what the model was read from: the fields the app changed since take the app's
    /// values, the others keep the store's (the newer server values, and local edits made since).
    ///
    /// A model read at an older change tag was read from the local record of that time: that version's server
    /// copy with the local edits then pending. A field equal to either is one the app didn't change. The store
    /// keeps the last ``StoreSchema/keptServerCopies`` of both; a model read longer ago than that, or one whose
    /// record carries no system fields, replaces every field.
    static func mergedWithNewerServerCopy(
        _ record: CloudRecord, readAt changeTag: String, stored: StoredRecord, in db: Database
    ) throws -> CloudRecord {
        let current = stored.ancestor?.systemFields?.changeTag ?? stored.record.systemFields?.changeTag
        guard current != changeTag, let earlier = try readVersion(of: record.id, changeTag: changeTag, in: db) else {
            return record
        }
        let server = SyncMetadataFields.split(earlier.server).record
        let local = SyncMetadataFields.split(earlier.local).record
        return RecordEdits(from: server, to: record, notAlreadyIn: local).applied(from: record, to: stored.record)
    }

    /// An earlier server copy of a record the store kept, by its change tag, with the local record of that time.
    static func readVersion(of id: CloudRecord.ID, changeTag: String, in db: Database) throws
        -> (server: CloudRecord, local: CloudRecord)?
    {
        guard
            let row = try Row.fetchOne(
                try db.cachedStatement(
                    sql: """
                        SELECT record, local FROM ncs_server_copy
                        WHERE zone_owner = ? AND zone_name = ? AND record_name = ? AND change_tag = ?
                        """), arguments: [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName, changeTag])
        else { return nil }
        return (try RecordCoding.decode(row, column: 0), try RecordCoding.decode(row, column: 1))
    }

    /// Deletes records as the app does, with the records that hold `.deleteSelf` references to them (as the server
    /// will), and queues the deletions; returns the records deleted.
    static func applyLocalDeletes(_ ids: [CloudRecord.ID], in db: Database) throws -> [CloudRecord.ID] {
        var deleted: [CloudRecord.ID] = []
        try DeleteSelfCascade.walk(from: ids, holders: { try StoreTables.referenceHolders(of: $0, in: db) }) { id in
            if try applyLocalDelete(id, in: db) { deleted.append(id) }
            return .descend
        }
        return deleted
    }

    /// Deletes one record the app deleted and queues the deletion; `false` if the store doesn't have it.
    static func applyLocalDelete(_ id: CloudRecord.ID, in db: Database) throws -> Bool {
        guard let stored = try StoreTables.record(id, in: db) else { return false }
        try checkShareAllows(saving: nil, id: id, in: db)
        let pending = try StoreTables.outboxEntry(id, in: db)
        try StoreTables.deleteRecord(id, in: db)
        if stored.ancestor == nil, stored.record.systemFields == nil, pending?.sent != true {
            // Never sent: there is nothing to delete on the server. (An upload in flight was marked sent before
            // it left, so it takes the other path.)
            try StoreTables.dequeue(id, in: db)
            return true
        }
        let version = try StoreTables.nextCounter(in: db)
        // The deletion remembers the copy the server may hold: with a save pending, the save as it was sent, edit
        // times included, since its answer may have been lost; so that copy, fetched back, is recognised as ours
        // and deleted, not taken for another device's edit. Deleting a record the server never got (a lost request)
        // is answered "unknown item", which counts as done: one wasted item, never a resurrected record.
        let copy = pending?.operation == .save ? SyncLedger.outgoing(stored) : stored.ancestor ?? stored.record
        try StoreTables.enqueue(
            .delete, id: id, recordType: stored.record.recordType, version: version, ancestor: copy,
            keepingSentCopies: true, in: db)
        return true
    }

    /// The server's copy a pending deletion remembers, without the engine's fields: the base a re-created record
    /// updates.
    static func serverCopy(_ record: CloudRecord) -> CloudRecord {
        SyncMetadataFields.split(record).record
    }

    /// The names of the fields whose values differ between two records, in a fixed order.
    static func changedFieldNames(from old: CloudRecord, to new: CloudRecord) -> [String] {
        // Nearly always the same fields in the same order (a model saved again): compared pair by pair, without a
        // set of names or a lookup of each by name.
        if old.fields.count == new.fields.count,
            zip(old.fields, new.fields).allSatisfy({ $0.name.hasSameBytes(as: $1.name) })
        {
            return zip(old.fields, new.fields).compactMap { $0.value == $1.value ? nil : $0.name }
        }
        var names: [String] = []
        var seen: Set<String> = []
        for name in old.fields.names + new.fields.names where seen.insert(name).inserted {
            if old[name] != new[name] { names.append(name) }
        }
        return names
    }
}
