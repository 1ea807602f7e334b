import Foundation
import NestedCloudKitCodable

extension WireOperationType {
    /// The operation that saves `record` under `savePolicy`.
    ///
    /// | Save policy | New record | Fetched record | Fetched record clearing fields |
    /// | --- | --- | --- | --- |
    /// | `ifServerRecordUnchanged` | `create` | `update` | `replace` |
    /// | `changedKeys` | `forceUpdate` | `forceUpdate` | `forceUpdate`, cleared fields `null` |
    /// | `allKeys` | `forceReplace` | `forceReplace` | `forceReplace` |
    ///
    /// A record is fetched when it has a change tag. `update` and `forceUpdate` change only the fields they send,
    /// like CloudKit's `ifServerRecordUnchanged` and `changedKeys`. A version-checked save that clears fields
    /// goes whole as `replace`, the documented way to clear them: the fetched record holds the server's fields.
    /// `changedKeys` promises to keep fields the client doesn't hold, which a replace would drop, so it sends
    /// cleared fields as `null` values (the value CloudKit documents for a field that isn't set).
    static func saving(_ record: CloudRecord, savePolicy: CloudRecordSavePolicy) -> WireOperationType {
        let isFetched = record.systemFields?.changeTag != nil
        switch savePolicy {
        case .ifServerRecordUnchanged: return !isFetched ? .create : record.clearsFields ? .replace : .update
        case .changedKeys: return .forceUpdate
        case .allKeys: return .forceReplace
        }
    }

    /// The operation that deletes a record under `savePolicy`: only `ifServerRecordUnchanged` checks versions.
    static func deleting(savePolicy: CloudRecordSavePolicy) -> WireOperationType {
        savePolicy == .ifServerRecordUnchanged ? .delete : .forceDelete
    }

    /// Whether the server checks the record's change tag, which the operation must then send.
    var checksChangeTag: Bool {
        self == .update || self == .replace
    }
}

extension WireRecordOperation {
    /// The operation that saves `record` under `savePolicy`.
    init(record: CloudRecord, savePolicy: CloudRecordSavePolicy) {
        let type = WireOperationType.saving(record, savePolicy: savePolicy)
        self.init(
            operationType: type,
            record: WireRecord(record, sendingChangeTag: type.checksChangeTag, clearingFields: type == .forceUpdate)
        )
    }

    /// The operation that deletes the record with `id` under `savePolicy`.
    init(deleting id: CloudRecord.ID, savePolicy: CloudRecordSavePolicy) {
        self.init(operationType: .deleting(savePolicy: savePolicy), record: WireRecord(recordName: id.recordName))
    }
}

extension CloudRecord {
    /// Whether saving the record removes values from the server: it has been saved and has cleared fields.
    var clearsFields: Bool {
        systemFields?.changeTag != nil && clearedFieldNames.contains { fields[$0] == nil }
    }
}
