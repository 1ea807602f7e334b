import Foundation

/// Why a share can't be made or changed as asked. Each error says how to fix the call.
///
/// Match an error by its ``code`` (a later release may add codes, so a `switch` over it needs a `default`), or
/// compare it with a value: `error == .participantWithoutIdentity`.
public struct CloudShareError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure an error is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let description: String

        private init(_ name: String) { description = name }

        /// See ``CloudShareError/defaultZoneCannotBeShared(_:)``.
        public static let defaultZoneCannotBeShared = Code("defaultZoneCannotBeShared")
        /// See ``CloudShareError/shareOutsideRootZone(shareID:rootRecordID:)``.
        public static let shareOutsideRootZone = Code("shareOutsideRootZone")
        /// See ``CloudShareError/notAShare(_:recordType:)``.
        public static let notAShare = Code("notAShare")
        /// See ``CloudShareError/participantWithoutIdentity``.
        public static let participantWithoutIdentity = Code("participantWithoutIdentity")
        /// See ``CloudShareError/participantRoleNotInvitable(_:)``.
        public static let participantRoleNotInvitable = Code("participantRoleNotInvitable")
        /// See ``CloudShareError/publicShareWithInvitedParticipants(_:)``.
        public static let publicShareWithInvitedParticipants = Code("publicShareWithInvitedParticipants")
    }

    /// What the error is, with what it is about. Private, so that a new kind breaks no app's `switch`.
    private enum Kind: Sendable, Hashable {
        case defaultZoneCannotBeShared(CloudRecord.ZoneID)
        case shareOutsideRootZone(shareID: CloudRecord.ID, rootRecordID: CloudRecord.ID)
        case notAShare(CloudRecord.ID, recordType: String)
        case participantWithoutIdentity
        case participantRoleNotInvitable(CloudShare.Role)
        case publicShareWithInvitedParticipants(CloudRecord.ID)
    }

    private let kind: Kind

    private init(_ kind: Kind) { self.kind = kind }

    /// CloudKit shares only custom zones: the record to share, or the zone, is in the default zone.
    public static func defaultZoneCannotBeShared(_ zoneID: CloudRecord.ZoneID) -> CloudShareError {
        CloudShareError(.defaultZoneCannotBeShared(zoneID))
    }

    /// A record share must be in its root record's zone.
    public static func shareOutsideRootZone(shareID: CloudRecord.ID, rootRecordID: CloudRecord.ID) -> CloudShareError {
        CloudShareError(.shareOutsideRootZone(shareID: shareID, rootRecordID: rootRecordID))
    }

    /// The record isn't a share (its type isn't ``CloudShare/recordType``).
    public static func notAShare(_ id: CloudRecord.ID, recordType: String) -> CloudShareError {
        CloudShareError(.notAShare(id, recordType: recordType))
    }

    /// A participant needs a user record name or an email address.
    public static let participantWithoutIdentity = CloudShareError(.participantWithoutIdentity)

    /// Only private users are invited; the server makes the owner and the public users.
    public static func participantRoleNotInvitable(_ role: CloudShare.Role) -> CloudShareError {
        CloudShareError(.participantRoleNotInvitable(role))
    }

    /// A share with a public permission has no invited participants, as in CloudKit: it is public or private,
    /// never both.
    public static func publicShareWithInvitedParticipants(_ id: CloudRecord.ID) -> CloudShareError {
        CloudShareError(.publicShareWithInvitedParticipants(id))
    }

    /// What kind of failure this is.
    public var code: Code {
        switch kind {
        case .defaultZoneCannotBeShared: .defaultZoneCannotBeShared
        case .shareOutsideRootZone: .shareOutsideRootZone
        case .notAShare: .notAShare
        case .participantWithoutIdentity: .participantWithoutIdentity
        case .participantRoleNotInvitable: .participantRoleNotInvitable
        case .publicShareWithInvitedParticipants: .publicShareWithInvitedParticipants
        }
    }

    /// The record the error is about: the share, or the record that isn't one.
    public var recordID: CloudRecord.ID? {
        switch kind {
        case .shareOutsideRootZone(let id, _), .notAShare(let id, _), .publicShareWithInvitedParticipants(let id): id
        default: nil
        }
    }

    /// The zone that can't be shared, for ``Code/defaultZoneCannotBeShared``; the root record's, for
    /// ``Code/shareOutsideRootZone``.
    public var zoneID: CloudRecord.ZoneID? {
        switch kind {
        case .defaultZoneCannotBeShared(let zone): zone
        case .shareOutsideRootZone(_, let root): root.zoneID
        default: nil
        }
    }

    /// The role that can't be invited, for ``Code/participantRoleNotInvitable``.
    public var role: CloudShare.Role? {
        if case .participantRoleNotInvitable(let role) = kind { return role }
        return nil
    }

    /// The type of the record that isn't a share, for ``Code/notAShare``.
    public var recordType: String? {
        if case .notAShare(_, let recordType) = kind { return recordType }
        return nil
    }

    /// What is wrong, and how to fix the call.
    public var description: String {
        switch kind {
        case .defaultZoneCannotBeShared(let zone):
            "Zone \(zone.zoneName) is the default zone, which CloudKit doesn't share: save the records to share in a "
                + "custom zone (create one with modifyRecordZones) and share them from there."
        case .shareOutsideRootZone(let shareID, let rootID):
            "Share \(shareID.recordName) is in zone \(shareID.zoneID.zoneName) but its root record "
                + "\(rootID.recordName) is in zone \(rootID.zoneID.zoneName): give the share an ID in its root "
                + "record's zone, or let CloudShare pick one."
        case .notAShare(let id, let recordType):
            "Record \(id.recordName) is a \(recordType), not a \(CloudShare.recordType): read shares only from share "
                + "records, such as a record's share ID in its system fields."
        case .participantWithoutIdentity:
            "A participant needs a user record name or an email address to be invited: set one of them."
        case .publicShareWithInvitedParticipants(let id):
            "Share \(id.recordName) has a public permission and invited participants, which CloudKit doesn't mix in "
                + "one share: set publicPermission to .none before inviting users, or remove the invited participants "
                + "to share with anyone who has the URL."
        case .participantRoleNotInvitable(let role):
            "A participant with role \(role.rawValue) can't be invited: invite private users; the server adds the "
                + "owner when the share is first saved, and public users when they accept the share's URL."
        }
    }
}
