import Foundation

extension CloudShare {
    /// What a share's URL tells a user before they accept it (`CKShare.Metadata`, Web Services' `records/resolve`):
    /// the share, what it shares, whose it is, and where the user stands in it.
    public struct Metadata: Sendable, Hashable {
        /// The share, in its owner's zone as the user names it (owned by ``ownerUserRecordName``).
        public var share: CloudShare
        /// The root of a shared hierarchy; `nil` for a zone-wide share.
        public var rootRecordID: CloudRecord.ID?
        /// The root record itself, when it was asked for and the user may read it.
        public var rootRecord: CloudRecord?
        /// The owner's user record name.
        public var ownerUserRecordName: String
        /// The user's role: an invited participant is a private user; anyone else would join a public share as a
        /// public user.
        public var participantRole: Role
        /// Whether the user has accepted, is invited, or was removed.
        public var participantStatus: AcceptanceStatus
        /// What accepting would let the user do: their invitation's permission, or the share's public permission.
        public var participantPermission: Permission

        /// Metadata from its parts; for tests and for backends.
        public init(
            share: CloudShare, rootRecordID: CloudRecord.ID?, rootRecord: CloudRecord? = nil,
            ownerUserRecordName: String, participantRole: Role,
            participantStatus: AcceptanceStatus, participantPermission: Permission
        ) {
            self.share = share
            self.rootRecordID = rootRecordID
            self.rootRecord = rootRecord
            self.ownerUserRecordName = ownerUserRecordName
            self.participantRole = participantRole
            self.participantStatus = participantStatus
            self.participantPermission = participantPermission
        }
    }
}
