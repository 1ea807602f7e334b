import Foundation
import NestedCloudKitCodable

extension WireOperationType {
    /// The operation that saves `record` under `savePolicy`.
    ///
    /// | Save policy | New record | Fetched record |
    /// | --- | --- | --- |
    /// | `ifServerRecordUnchanged` | `create` | `update` |
    /// | `changedKeys` | `forceUpdate` | `forceUpdate` |
    /// | `allKeys` | `forceUpdate` | `forceUpdate` |
    ///
    /// A record is fetched when it has a change tag. Each sends the fields the record holds, and the fields it
    /// clears as `null` values (the value CloudKit documents for a field that isn't set). None is a `replace` or
    /// `forceReplace`, which "Modifying Records" says sets every field not sent to null: that would erase the fields a
    /// newer version of the app added, which an older one's record doesn't hold. `allKeys` keeps such fields in
    /// CloudKit's framework too ("a server record can contain keys that aren't present locally").
    static func saving(_ record: CloudRecord, savePolicy: CloudRecordSavePolicy) -> WireOperationType {
        switch savePolicy {
        case .ifServerRecordUnchanged: record.systemFields?.changeTag == nil ? .create : .update
        case .changedKeys, .allKeys: .forceUpdate
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
            record: WireRecord(record, sendingChangeTag: type.checksChangeTag, clearingFields: type != .create)
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
