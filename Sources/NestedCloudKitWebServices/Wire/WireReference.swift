import Foundation
import NestedCloudKitCodable

/// A reference dictionary: `{recordName, zoneID, action}` with action `NONE`, `DELETE_SELF` or `VALIDATE`.
struct WireReference: Codable, Hashable, Sendable {
    var recordName: String
    var zoneID: WireZoneID?
    var action: String?

    init(_ reference: CloudReference) {
        recordName = reference.recordID.recordName
        zoneID = WireZoneID(reference.recordID.zoneID)
        action =
            switch reference.action {
            case .none: "NONE"
            case .deleteSelf: "DELETE_SELF"
            case .validate: "VALIDATE"
            }
    }

    /// The portable reference; a missing zone is the default zone and a missing or unknown action is `.none`,
    /// the action that promises nothing.
    var reference: CloudReference {
        let zone =
            zoneID.map {
                CloudRecord.ZoneID(
                    zoneName: $0.zoneName, ownerName: $0.ownerRecordName ?? CloudRecord.ZoneID.currentUserOwnerName)
            } ?? .default
        let action: CloudReference.Action =
            switch action {
            case "DELETE_SELF": .deleteSelf
            case "VALIDATE": .validate
            default: .none
            }
        return CloudReference(recordID: CloudRecord.ID(recordName: recordName, zoneID: zone), action: action)
    }
}
