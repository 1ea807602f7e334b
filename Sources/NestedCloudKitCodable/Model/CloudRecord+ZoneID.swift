import Foundation

extension CloudRecord {
    /// A record zone's identity: its name and the user who owns it.
    ///
    /// The portable counterpart of `CKRecordZone.ID`.
    public struct ZoneID: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The name of CloudKit's default zone, `_defaultZone`.
        public static let defaultZoneName = "_defaultZone"

        /// The owner name that stands for the current user, `__defaultOwner__` (`CKCurrentUserDefaultName`).
        public static let currentUserOwnerName = "__defaultOwner__"

        /// Every database's default zone, owned by the current user.
        ///
        /// The default zone needs no creating, but it does not support atomic saves or change tracking.
        public static let `default` = ZoneID(zoneName: defaultZoneName)

        /// The zone's name.
        public var zoneName: String

        /// The record name of the user who owns the zone.
        public var ownerName: String

        /// Creates a zone ID.
        ///
        /// - Parameters:
        ///   - zoneName: The zone's name.
        ///   - ownerName: The owner's user record name; the current user if omitted.
        public init(zoneName: String, ownerName: String = currentUserOwnerName) {
            self.zoneName = zoneName
            self.ownerName = ownerName
        }

        /// The zone name, qualified by its owner when the owner isn't the current user.
        public var description: String {
            ownerName == Self.currentUserOwnerName ? zoneName : "\(zoneName) of \(ownerName)"
        }
    }
}
