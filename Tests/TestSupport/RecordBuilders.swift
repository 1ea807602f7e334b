import Foundation
import NestedCloudKitCodable

/// A record in the default zone, for building expectations.
package func record(_ type: String, _ name: String, _ fields: CloudRecord.Fields, zone: CloudRecord.ZoneID = .default)
    -> CloudRecord
{
    CloudRecord(recordType: type, id: CloudRecord.ID(recordName: name, zoneID: zone), fields: fields)
}

/// A reference to a record in the default zone.
package func reference(_ name: String, _ action: CloudReference.Action = .none, zone: CloudRecord.ZoneID = .default)
    -> CloudValue
{
    .reference(CloudReference(recordID: CloudRecord.ID(recordName: name, zoneID: zone), action: action))
}

extension Date {
    /// A date from whole milliseconds since 1970, as CloudKit stores it.
    package static func milliseconds(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
