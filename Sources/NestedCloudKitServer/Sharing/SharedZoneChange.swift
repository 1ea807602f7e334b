import Foundation
import NestedCloudKitCodable

/// How a write changed one zone of an owner's database, so that a server of several users brings its viewers'
/// copies up to date by what changed rather than by the whole zone (``SharedCopies``).
package struct SharedZoneChange: Sendable, Hashable {
    /// The names of the records written.
    package var written: Set<String> = []
    /// The names of the records removed.
    package var removed: Set<String> = []
    /// Whether the write may change who sees records it didn't write: a share saved or deleted, a record's share
    /// changed, a record with children moved, made or deleted. Such a write refreshes the whole zone.
    package var reshaped = false

    package init(written: Set<String> = [], removed: Set<String> = [], reshaped: Bool = false) {
        self.written = written
        self.removed = removed
        self.reshaped = reshaped
    }

    /// A change that refreshes the whole zone: zones made or deleted, shares accepted or left, or a server that
    /// doesn't say what a write touched.
    package static let everything = SharedZoneChange(reshaped: true)
}

extension SharedZoneChange {
    /// How a write about to happen changes each zone: which records, and whether it may change who sees records it
    /// doesn't write (read before the write, from the records as stored), added to `changes`.
    package static func track(
        writing records: [CloudRecord], removing removed: [CloudRecord.ID], in store: some CloudStorageTransaction,
        into changes: inout [CloudRecord.ZoneID: SharedZoneChange]
    ) throws {
        for record in records {
            var change = changes[record.id.zoneID] ?? SharedZoneChange()
            change.written.insert(record.id.recordName)
            if !change.reshaped {
                let stored = try store.skeleton(of: record.id)
                if record.recordType == CloudShare.recordType || stored?.recordType == CloudShare.recordType
                    || record.systemFields?.shareID != stored?.systemFields?.shareID
                {
                    change.reshaped = true
                } else if stored == nil || stored?.parentID != record.parentID {
                    // A new record may be the parent orphans were waiting for; a moved one takes its children along.
                    change.reshaped = try store.hasChildren(record.id)
                }
            }
            changes[record.id.zoneID] = change
        }
        for id in removed {
            var change = changes[id.zoneID] ?? SharedZoneChange()
            change.removed.insert(id.recordName)
            if !change.reshaped {
                change.reshaped =
                    try store.skeleton(of: id)?.recordType == CloudShare.recordType || store.hasChildren(id)
            }
            changes[id.zoneID] = change
        }
    }
}
