import Foundation
import NestedCloudKitCodable

/// A zone ID dictionary: `{zoneName, ownerRecordName}`.
///
/// The owner is left out for the current user's zones, as the documentation allows: the server fills in the
/// user's real record name, which the client doesn't know (and CloudKit's frameworks call `__defaultOwner__`).
struct WireZoneID: Codable, Hashable, Sendable {
    var zoneName: String
    var ownerRecordName: String?

    init(zoneName: String, ownerRecordName: String? = nil) {
        self.zoneName = zoneName
        self.ownerRecordName = ownerRecordName
    }

    init(_ zoneID: CloudRecord.ZoneID) {
        zoneName = zoneID.zoneName
        ownerRecordName = zoneID.ownerName == CloudRecord.ZoneID.currentUserOwnerName ? nil : zoneID.ownerName
    }
}

/// The `created` and `modified` dictionaries of a record: when, by whom and from which device.
struct WireUserTimestamp: Codable, Hashable, Sendable {
    var timestamp: Double?
    var userRecordName: String?
    var deviceID: String?
}
