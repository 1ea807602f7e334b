#if canImport(CloudKit)
import CloudKit
import Foundation

// Shares between the portable model and CloudKit's framework: `CKShare` (a `CKRecord`), its participants and its
// metadata. CloudKit keeps what the portable model keeps, with two differences the bridge bridges: a `CKShare`
// doesn't say which record it shares (its root's `share` does), and a participant is made by the container from a
// user record ID or an email address, never from its parts (``CloudKitDatabase`` asks for it when a share is saved).

extension CloudShare.Permission {
    /// A CloudKit participant permission; `unknown` reads as `none`.
    public init(_ permission: CKShare.ParticipantPermission) {
        switch permission {
        case .readOnly: self = .readOnly
        case .readWrite: self = .readWrite
        default: self = .none
        }
    }

    /// The permission as CloudKit names it.
    public var ckPermission: CKShare.ParticipantPermission {
        switch self {
        case .none: .none
        case .readOnly: .readOnly
        case .readWrite: .readWrite
        }
    }
}

extension CloudShare.Role {
    /// A CloudKit participant role; `unknown` (and the administrator role of newer systems) read as a private user.
    public init(_ role: CKShare.ParticipantRole) {
        switch role {
        case .owner: self = .owner
        case .publicUser: self = .publicUser
        default: self = .privateUser
        }
    }
}

extension CloudShare.AcceptanceStatus {
    /// A CloudKit acceptance status.
    public init(_ status: CKShare.ParticipantAcceptanceStatus) {
        switch status {
        case .pending: self = .pending
        case .accepted: self = .accepted
        case .removed: self = .removed
        default: self = .unknown
        }
    }
}

extension CloudShare.Participant {
    /// A CloudKit participant: its identity (user record name, email address), role, permission and acceptance.
    public init(_ participant: CKShare.Participant) {
        let identity = participant.userIdentity
        self.init(
            userRecordName: identity.userRecordID?.recordName ?? identity.lookupInfo?.userRecordID?.recordName,
            emailAddress: identity.lookupInfo?.emailAddress, role: CloudShare.Role(participant.role),
            permission: CloudShare.Permission(participant.permission),
            acceptanceStatus: CloudShare.AcceptanceStatus(participant.acceptanceStatus))
    }

    /// Whether the participant has an identity the portable model keeps: a user record name or an email address.
    var hasIdentity: Bool { userRecordName != nil || emailAddress != nil }

    /// Whether a CloudKit participant is this one: by user record name, else by email address.
    func isSame(as participant: CKShare.Participant) -> Bool {
        isSameUser(as: CloudShare.Participant(participant))
    }
}

extension CloudShare {
    /// A share fetched through CloudKit's framework, with its participants, public permission and URL. A
    /// `CKShare` doesn't say what it shares: ``rootRecordID`` is `nil` (the root's `shareID` names the share).
    ///
    /// - Throws: ``CKCodableError/Code/corruptedValue`` for a field value of a type CloudKit doesn't store.
    public init(_ share: CKShare) throws {
        try self.init(record: try CloudRecord(share))
    }
}

extension CloudShare.Metadata {
    /// What a share's URL told CloudKit's framework (`CKShare.Metadata`), in the portable model.
    ///
    /// - Throws: ``CKCodableError/Code/corruptedValue`` for a field value of a type CloudKit doesn't store.
    public init(_ metadata: CKShare.Metadata) throws {
        self.init(
            share: try CloudShare(metadata.share),
            rootRecordID: metadata.hierarchicalRootRecordID.map(CloudRecord.ID.init),
            rootRecord: try metadata.rootRecord.map(CloudRecord.init),
            ownerUserRecordName: metadata.ownerIdentity.userRecordID?.recordName
                ?? metadata.share.recordID.zoneID.ownerName,
            participantRole: CloudShare.Role(metadata.participantRole),
            participantStatus: CloudShare.AcceptanceStatus(metadata.participantStatus),
            participantPermission: CloudShare.Permission(metadata.participantPermission))
    }
}

extension CloudShare.Contents {
    /// What a `CKShare` keeps besides its fields: public permission, participants (the owner first), URL.
    init(_ share: CKShare) {
        var participants = share.participants.map(CloudShare.Participant.init)
        if let owner = participants.firstIndex(where: { $0.role == .owner }), owner != 0 {
            participants.insert(participants.remove(at: owner), at: 0)
        }
        self.init(
            rootRecordID: nil, publicPermission: CloudShare.Permission(share.publicPermission),
            participants: participants, url: share.url, shortGUID: share.url?.lastPathComponent)
    }
}
#endif
