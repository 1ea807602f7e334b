import Foundation
import NestedCloudKitCodable

/// A share participant dictionary: `participantId`, `userIdentity` (`userRecordName`, and `lookupInfo` with an
/// `emailAddress`), `type` (`OWNER`, `PRIVATE_USER`, `PUBLIC_USER`), `acceptanceStatus` and `permission`.
struct WireShareParticipant: Codable, Hashable, Sendable {
    var participantId: String?
    var userIdentity: WireUserIdentity?
    var type: String?
    var acceptanceStatus: String?
    var permission: String?

    init(_ participant: CloudShare.Participant) {
        participantId = participant.participantID
        userIdentity = WireUserIdentity(
            userRecordName: participant.userRecordName,
            lookupInfo: participant.emailAddress.map { WireLookupInfo(emailAddress: $0) })
        type = participant.role.rawValue
        acceptanceStatus = participant.acceptanceStatus.rawValue
        permission = participant.permission.rawValue
    }

    /// The portable participant. A role or permission the server leaves out, or names in a way this client doesn't
    /// know, is CloudKit's default (a read-only private user); an acceptance it doesn't give is `unknown`.
    var participant: CloudShare.Participant {
        CloudShare.Participant(
            userRecordName: userIdentity?.userRecordName ?? userIdentity?.lookupInfo?.userRecordName,
            emailAddress: userIdentity?.lookupInfo?.emailAddress,
            role: type.flatMap(CloudShare.Role.init(rawValue:)) ?? .privateUser,
            permission: permission.flatMap(CloudShare.Permission.init(rawValue:)) ?? .readOnly,
            acceptanceStatus: acceptanceStatus.flatMap(CloudShare.AcceptanceStatus.init(rawValue:)) ?? .unknown,
            participantID: participantId)
    }
}

/// A user identity dictionary: `userRecordName`, `lookupInfo`, `nameComponents` (not read).
struct WireUserIdentity: Codable, Hashable, Sendable {
    var userRecordName: String?
    var lookupInfo: WireLookupInfo?
}

/// A lookup info dictionary: `emailAddress`, `phoneNumber` (not read), `userRecordName`.
struct WireLookupInfo: Codable, Hashable, Sendable {
    var emailAddress: String?
    var userRecordName: String?

    init(emailAddress: String?, userRecordName: String? = nil) {
        self.emailAddress = emailAddress
        self.userRecordName = userRecordName
    }
}
