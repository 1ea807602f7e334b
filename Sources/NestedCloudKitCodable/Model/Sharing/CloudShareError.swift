import Foundation

/// Why a share can't be made or changed as asked. Each case says how to fix the call.
public enum CloudShareError: Error, Sendable, Hashable, CustomStringConvertible {
    /// CloudKit shares only custom zones: the record to share, or the zone, is in the default zone.
    case defaultZoneCannotBeShared(CloudRecord.ZoneID)
    /// A record share must be in its root record's zone.
    case shareOutsideRootZone(shareID: CloudRecord.ID, rootRecordID: CloudRecord.ID)
    /// The record isn't a share (its type isn't ``CloudShare/recordType``).
    case notAShare(CloudRecord.ID, recordType: String)
    /// A participant needs a user record name or an email address.
    case participantWithoutIdentity
    /// Only private users are invited; the server makes the owner and the public users.
    case participantRoleNotInvitable(CloudShare.Role)
    /// A share with a public permission has no invited participants, as in CloudKit: it is public or private,
    /// never both.
    case publicShareWithInvitedParticipants(CloudRecord.ID)

    /// What is wrong, and how to fix the call.
    public var description: String {
        switch self {
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
