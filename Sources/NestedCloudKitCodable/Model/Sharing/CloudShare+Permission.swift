import Foundation

extension CloudShare {
    /// What a participant, or anyone with the share's URL, may do with the shared records: the portable
    /// counterpart of `CKShare.ParticipantPermission`. The raw values are CloudKit Web Services' names.
    public enum Permission: String, Sendable, Hashable, Codable, CaseIterable {
        /// No access. As a share's ``CloudShare/publicPermission``, only the invited participants may join.
        case none = "NONE"
        /// Read the shared records; writes are refused.
        case readOnly = "READ_ONLY"
        /// Read, change, add and delete shared records.
        case readWrite = "READ_WRITE"

        /// Whether the permission lets its holder save and delete shared records.
        public var allowsWriting: Bool { self == .readWrite }

        /// Whether the permission lets its holder read the shared records.
        public var allowsReading: Bool { self != .none }
    }

    /// How a participant came to the share: the portable counterpart of `CKShare.ParticipantRole`. The raw values
    /// are CloudKit Web Services' participant types.
    public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
        /// The user who made the share and owns the shared records; always reads and writes.
        case owner = "OWNER"
        /// A user the owner invited by name.
        case privateUser = "PRIVATE_USER"
        /// A user who joined through the share's URL, by its ``CloudShare/publicPermission``.
        case publicUser = "PUBLIC_USER"
    }

    /// Where a participant stands with the share: the portable counterpart of
    /// `CKShare.ParticipantAcceptanceStatus`. The raw values are CloudKit Web Services' names.
    public enum AcceptanceStatus: String, Sendable, Hashable, Codable, CaseIterable {
        /// Invited, not accepted yet: the shared records aren't in the participant's shared database.
        case pending = "PENDING"
        /// Accepted: the shared records are in the participant's shared database.
        case accepted = "ACCEPTED"
        /// Removed by the owner, or left: the participant no longer sees the shared records.
        case removed = "REMOVED"
        /// Not known to this client.
        case unknown = "UNKNOWN"
    }
}
