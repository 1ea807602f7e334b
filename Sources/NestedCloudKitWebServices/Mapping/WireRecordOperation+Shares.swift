import Foundation
import NestedCloudKitCodable

extension CloudKitWebServicesDatabase {
    /// Names each share saved in a request on its root record's operation (the root's `share`), which is how a
    /// request says what a record share shares: a share record on the wire doesn't name its root.
    ///
    /// - Parameters:
    ///   - saves: The save operations, in the order of `records`.
    ///   - records: The records they save.
    static func pointRootsAtTheirNewShares(_ saves: inout [WireRecordOperation], records: [CloudRecord]) {
        var positions: [CloudRecord.ID: Int] = [:]
        for (index, record) in records.enumerated() { positions[record.id] = index }
        for record in records where record.recordType == CloudShare.recordType {
            guard let rootID = record.shareContents?.rootRecordID, let root = positions[rootID] else { continue }
            saves[root].record.share = WireRecordPointer(recordName: record.id.recordName)
        }
    }
}
