import Foundation
import NestedCloudKitCodable

/// One item of a modify request, as CloudKit Web Services names the seven kinds (`records/modify`'s
/// `operationType`): what the item requires of the server's copy, and what it does to the stored fields.
///
/// `CloudModificationPlan` takes these. A `CloudDatabase` call says the same with a save policy, which
/// `init(saving:savePolicy:)` reads; the emulator reads them from the wire. So every backend that stores
/// records, and the emulator over them, keeps one set of rules.
package enum CloudRecordOperation: Sendable, Hashable {
    /// Saves a new record; fails with `CloudDatabaseError/serverRecordChanged(server:client:ancestor:)` if the
    /// record exists.
    case create(CloudRecord)
    /// Changes the record's fields (the ones it holds, and the ones it clears) if the server's change tag is the
    /// record's; others keep the server's values.
    case update(CloudRecord)
    /// Changes the record's fields whatever the server's version; creates the record if it doesn't exist.
    case forceUpdate(CloudRecord)
    /// Replaces the record's fields (those it doesn't hold are cleared) if the server's change tag is the record's.
    case replace(CloudRecord)
    /// Replaces the record's fields whatever the server's version; creates the record if it doesn't exist.
    case forceReplace(CloudRecord)
    /// Deletes the record, if the server's change tag is this one when one is given.
    case delete(CloudRecord.ID, changeTag: String?)
    /// Deletes the record whatever its version.
    case forceDelete(CloudRecord.ID)

    /// The item that saves `record` as a `CloudDatabase` call does under `savePolicy`:
    /// `ifServerRecordUnchanged` creates a record without a change tag and updates one with it; `changedKeys` and
    /// `allKeys` update whatever the server's version. None replaces: CloudKit's `allKeys` writes every key the
    /// record holds, and "a server record can contain keys that aren't present locally", which stay
    /// (`CKModifyRecordsOperation.RecordSavePolicy.allKeys`). A portable record always sends every field it holds,
    /// so the two forced policies save the same.
    package init(saving record: CloudRecord, savePolicy: CloudRecordSavePolicy) {
        switch savePolicy {
        case .ifServerRecordUnchanged:
            self = record.systemFields?.changeTag == nil ? .create(record) : .update(record)
        case .changedKeys, .allKeys: self = .forceUpdate(record)
        }
    }

    /// The items of a `CloudDatabase` call: each record saved under `savePolicy`, then each ID deleted whatever
    /// its version (a `CloudDatabase` deletion doesn't check one).
    package static func items(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy
    ) -> [CloudRecordOperation] {
        recordsToSave.map { CloudRecordOperation(saving: $0, savePolicy: savePolicy) }
            + recordIDsToDelete.map(CloudRecordOperation.forceDelete)
    }

    /// The ID of the record the item changes.
    package var id: CloudRecord.ID {
        switch self {
        case .create(let record), .update(let record), .forceUpdate(let record), .replace(let record),
            .forceReplace(let record):
            record.id
        case .delete(let id, _), .forceDelete(let id): id
        }
    }

    /// The record the item saves; `nil` for a deletion.
    package var recordToSave: CloudRecord? {
        switch self {
        case .create(let record), .update(let record), .forceUpdate(let record), .replace(let record),
            .forceReplace(let record):
            record
        case .delete, .forceDelete: nil
        }
    }

    /// The same item with its record to save transformed (a deletion unchanged): a backend's copy of the record
    /// with its assets stored, say.
    package func mappingRecord(_ transform: (CloudRecord) throws -> CloudRecord) rethrows -> CloudRecordOperation {
        switch self {
        case .create(let record): .create(try transform(record))
        case .update(let record): .update(try transform(record))
        case .forceUpdate(let record): .forceUpdate(try transform(record))
        case .replace(let record): .replace(try transform(record))
        case .forceReplace(let record): .forceReplace(try transform(record))
        case .delete, .forceDelete: self
        }
    }

    /// The fields a saved record holds once the item applies over the server's copy: the record's values over the
    /// server's (over none for a replace), the fields it clears removed. Empty for a deletion.
    package func storedFields(over server: CloudRecord?) -> CloudRecord.Fields {
        guard let client = recordToSave else { return CloudRecord.Fields() }
        var fields = replacesFields ? CloudRecord.Fields() : server?.fields ?? CloudRecord.Fields()
        for (name, value) in client.fields {
            // A value CloudKit keeps in another form (a date to the millisecond) is stored in that form; the plan
            // refuses one it can't store before asking.
            fields[name] = value.storedByCloudKit ?? value
        }
        for name in client.clearedFieldNames where client.fields[name] == nil { fields[name] = nil }
        return fields
    }

    /// The change tag the server's copy must have for the item to apply; `nil` when the item doesn't check it.
    /// For an update or a replace of a record without one, the tag is missing: the check then fails.
    var requiredChangeTag: String?? {
        switch self {
        case .update(let record), .replace(let record): .some(record.systemFields?.changeTag)
        case .delete(_, let changeTag?): .some(changeTag)
        case .create, .forceUpdate, .forceReplace, .delete, .forceDelete: nil
        }
    }

    /// Whether the fields the saved record doesn't hold are cleared, rather than kept from the server's copy.
    var replacesFields: Bool {
        switch self {
        case .replace, .forceReplace: true
        case .create, .update, .forceUpdate, .delete, .forceDelete: false
        }
    }
}
