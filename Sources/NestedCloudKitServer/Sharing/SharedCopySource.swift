import Foundation
import NestedCloudKitCodable

/// An owner's database as a refresh of shared copies reads it (``SharedCopies``): its shares, its records as the
/// share rules read them, and the copies a viewer's shared database writes.
package protocol SharedCopySource: SharedZoneShape {
    /// The share records of a zone.
    func shares(in zone: CloudRecord.ZoneID) throws -> [CloudRecord]

    /// Every record of a zone as the share rules read it: its ID, type, parent, share and change tag (its fields
    /// may be left out).
    func skeletons(in zone: CloudRecord.ZoneID) throws -> [CloudRecord]

    /// What a viewer's copy writes of these records (those that exist), named as the viewer's shared database
    /// names them (``CloudRecord/ZoneID/sharedName(ownedBy:)``).
    func copies(of ids: [CloudRecord.ID], sharedBy owner: String) throws -> SharedRecordCopies
}

/// Copies of an owner's records for a viewer's shared database: the records, and the contents of their assets where
/// the storage keeps them beside the records (a SQLite file's asset table).
package struct SharedRecordCopies: Sendable {
    /// The records, named as the viewer's shared database names them.
    package var records: [CloudRecord]
    /// The contents of their assets, by where they are in the copies.
    package var contents: [AssetKey: Data]

    package init(records: [CloudRecord], contents: [AssetKey: Data] = [:]) {
        self.records = records
        self.contents = contents
    }

    /// The copies of the records with these names only.
    func keeping(_ names: Set<String>) -> SharedRecordCopies {
        SharedRecordCopies(
            records: records.filter { names.contains($0.id.recordName) },
            contents: contents.filter { names.contains($0.key.recordID.recordName) })
    }
}
