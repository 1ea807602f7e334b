import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

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
