import Foundation

extension CloudRecord {
    /// A record's identity: its name, unique within its zone, and the zone.
    ///
    /// The portable counterpart of `CKRecord.ID`.
    public struct ID: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The record's name, unique within its zone.
        ///
        /// CloudKit accepts ASCII names of 1 to 255 characters that don't start with an underscore.
        public var recordName: String

        /// The zone that holds the record.
        public var zoneID: ZoneID

        /// Creates a record ID.
        ///
        /// - Parameters:
        ///   - recordName: The record's name.
        ///   - zoneID: The zone that holds the record; the default zone if omitted.
        public init(recordName: String, zoneID: ZoneID = .default) {
            self.recordName = recordName
            self.zoneID = zoneID
        }

        /// Hashes the record name only: IDs in one dictionary are nearly always in one zone, and hashing the zone's
        /// and owner's names too tripled the cost of every lookup. Equality still compares all three.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(recordName)
        }

        /// The record name, qualified by its zone when it isn't in the default zone.
        public var description: String {
            zoneID == .default ? recordName : "\(recordName) (zone \(zoneID))"
        }
    }
}
