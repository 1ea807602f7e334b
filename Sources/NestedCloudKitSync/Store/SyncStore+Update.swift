import Foundation
import GRDB
import NestedCloudKitCodable

extension SyncStore {
    /// Changes a model in place: reads it, lets `change` edit it, and saves what changed, in one transaction.
    ///
    /// ```swift
    /// try await store.update(Note.self, id: "n1") { note in note.title = "Groceries" }
    /// ```
    ///
    /// Only the fields `change` changed become the user's edits (with their edit times): a sync that brought
    /// another device's change to another field, before or while the app edits, keeps it. Saving a model read
    /// earlier can't say which fields the app changed unless the model carries its system fields (see
    /// ``save(_:in:)``); this can.
    ///
    /// - Parameters:
    ///   - type: The model's type.
    ///   - id: The model's identifier.
    ///   - zoneID: The zone; the store's ``zoneID`` if omitted.
    ///   - change: Edits the model. It runs inside the store's write transaction: keep it short, and don't call
    ///     the store from it.
    /// - Returns: The model as saved.
    /// - Throws: ``SyncError/recordFromNewerVersion(_:recordVersion:modelVersion:)`` for a record a newer layout
    ///   version of the model wrote; ``SyncError/notFound(_:)`` if the store has no such model; what `change`
    ///   throws (nothing is saved); `CKCodableError` if the model can't be decoded or encoded.
    @discardableResult
    public func update<Model: CKDecodable & CKEncodable & Identifiable>(
        _ type: Model.Type, id: Model.ID, in zoneID: CloudRecord.ZoneID? = nil,
        _ change: @escaping @Sendable (inout Model) throws -> Void
    ) async throws -> Model {
        let zone = zoneID ?? self.zoneID
        let rootID = CloudRecord.ID(recordName: NestedCloudKitCodable.recordName(describing: id), zoneID: zone)
        let assets = assetFiles
        let result: Transfer<Model>
        do {
            result = try await write { db -> Transfer<Model> in
                guard let root = try StoreTables.records([rootID], in: db).first,
                    let original = try Self.decode(Model.self, from: [root], in: db).first
                else { throw SyncError.notFound(rootID) }
                try Self.checkModelVersion(Model.cloudKitSchemaVersion, canWrite: root)
                var model = original
                do { try change(&model) } catch { throw ChangeFailed(error: error) }
                let encoder = CKRecordEncoder(zoneID: zone)
                let before = Dictionary(
                    try encoder.encodeRecords(original).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                let now = self.nextEditTime()
                var changed = false
                let records = try encoder.encodeRecords(model)
                let batch = Self.sharedZoneBatch(records)
                for record in records {
                    var merged = record
                    if let base = before[record.id], let stored = try StoreTables.record(record.id, in: db) {
                        let edits = RecordEdits(from: base, to: record)
                        guard !edits.isEmpty else { continue }
                        merged = edits.applied(from: record, to: stored.record)
                    }
                    if try Self.applyLocalSave(merged, at: now, assets: assets, batch: batch, in: db) { changed = true }
                }
                if changed { try StoreTables.noteLocalChange(in: db) }
                return Transfer(value: model)
            }
        } catch let failed as ChangeFailed {
            throw failed.error
        }
        return result.value
    }
}

/// What an update's closure threw, carried out of the write transaction as it was thrown.
struct ChangeFailed: Error, @unchecked Sendable {
    // `@unchecked`: the error is only rethrown to the caller that awaited the update, never shared.
    let error: any Error
}
