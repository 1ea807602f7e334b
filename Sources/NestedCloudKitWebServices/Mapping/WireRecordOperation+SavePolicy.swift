import Foundation
import NestedCloudKitCodable

extension WireOperationType {
    /// The operation that saves `record` under `savePolicy`.
    ///
    /// | Save policy | New record | Fetched record | Fetched record clearing fields |
    /// | --- | --- | --- | --- |
    /// | `ifServerRecordUnchanged` | `create` | `update` | `replace` |
    /// | `changedKeys` | `forceUpdate` | `forceUpdate` | `forceReplace` |
    /// | `allKeys` | `forceReplace` | `forceReplace` | `forceReplace` |
    ///
    /// A record is fetched when it has a change tag. `update` and `forceUpdate` change only the fields they send,
    /// like CloudKit's `ifServerRecordUnchanged` and `changedKeys`; removing a field's value takes a replace,
    /// which clears every field it doesn't send, so a record that clears fields goes whole.
    static func saving(_ record: CloudRecord, savePolicy: CloudRecordSavePolicy) -> WireOperationType {
        let isFetched = record.systemFields?.changeTag != nil
        let clearsFields = isFetched && record.clearedFieldNames.contains { record.fields[$0] == nil }
        switch savePolicy {
        case .ifServerRecordUnchanged: return !isFetched ? .create : clearsFields ? .replace : .update
        case .changedKeys: return clearsFields ? .forceReplace : .forceUpdate
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
            record: WireRecord(record, sendingChangeTag: type.checksChangeTag)
        )
    }

    /// The operation that deletes the record with `id` under `savePolicy`.
    init(deleting id: CloudRecord.ID, savePolicy: CloudRecordSavePolicy) {
        self.init(operationType: .deleting(savePolicy: savePolicy), record: WireRecord(recordName: id.recordName))
    }
}
