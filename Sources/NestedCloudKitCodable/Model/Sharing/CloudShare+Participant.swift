import Foundation

extension CloudShare {
    /// A user's place in a share: who they are, how they came, what they may do and whether they accepted. The
    /// portable counterpart of `CKShare.Participant`.
    ///
    /// A participant is named by their user record name (what ``CloudDatabase`` backends call a user), or, before
    /// the server has matched them to a user, by an email address:
    ///
    /// ```swift
    /// share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
    /// ```
    public struct Participant: Sendable, Hashable, Codable {
        /// The participant's user record name, once known.
        public var userRecordName: String?

        /// The email address the owner invited the participant by, if any.
        public var emailAddress: String?

        /// How the participant came to the share.
        public var role: Role

        /// What the participant may do with the shared records. The owner always reads and writes.
        public var permission: Permission

        /// Whether the participant accepted the share. New participants are ``AcceptanceStatus/pending``.
        public var acceptanceStatus: AcceptanceStatus

        /// The server's identifier for this participant, once the share has been saved.
        public var participantID: String?

        /// Creates a participant: an invited user (``Role/privateUser``), read-only and pending unless said
        /// otherwise, as CloudKit makes them.
        public init(
            userRecordName: String? = nil, emailAddress: String? = nil, role: Role = .privateUser,
            permission: Permission = .readOnly, acceptanceStatus: AcceptanceStatus = .pending,
            participantID: String? = nil
        ) {
            self.userRecordName = userRecordName
            self.emailAddress = emailAddress
            self.role = role
            self.permission = permission
            self.acceptanceStatus = acceptanceStatus
            self.participantID = participantID
        }

        /// Whether this participant and `other` are the same user: the same user record name, or, where either
        /// has none yet, the same email address.
        func isSameUser(as other: Participant) -> Bool {
            if let name = userRecordName, let otherName = other.userRecordName { return name == otherName }
            if let email = emailAddress, let otherEmail = other.emailAddress {
                return email.lowercased() == otherEmail.lowercased()
            }
            return false
        }
    }
}
