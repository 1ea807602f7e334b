import Foundation
import NestedCloudKitCodable

extension InMemoryCloudDatabase {
    /// Accepts a share as the signed-in user, from the short GUID of its URL (`CloudShare/shortGUID`), as
    /// CloudKit Web Services' `records/accept` does: an invited participant becomes accepted; anyone else joins a
    /// public share as a public user with its public permission. The share's new version is in its owner's
    /// database, with the owner's change history, and what it covers appears in the user's shared database
    /// (``sharedDatabase(of:)``).
    ///
    /// - Returns: The share as it is once accepted, in the owner's zone as the user's shared database names it.
    /// - Throws: `CloudDatabaseError/invalidArguments(_:)` for a short GUID no share has (a forged or mistyped
    ///   URL) and for the owner accepting their own share; `CloudDatabaseError/permissionFailure(_:)` for a user
    ///   a private share doesn't list.
    public func acceptShare(shortGUID: String) async throws -> CloudShare {
        try await acceptShare(shortGUID: shortGUID, as: .signedIn)
    }

    /// Accepts a share as the caller's user; the share comes back as they name it, in the owner's zone.
    func acceptShare(shortGUID: String, as caller: Caller) async throws -> CloudShare {
        try await cloudServer.acceptShare(shortGUID: shortGUID) { try await self.user(of: caller) }
    }

    /// What a share's URL tells the signed-in user before they accept it, from its short GUID, as Web Services'
    /// `records/resolve` and `CKFetchShareMetadataOperation` do.
    ///
    /// - Parameters:
    ///   - shortGUID: The last part of the share's URL.
    ///   - fetchingRootRecord: Whether to include the root record (for a hierarchy share).
    /// - Throws: `CloudDatabaseError/invalidArguments(_:)` for a short GUID no share has;
    ///   `CloudDatabaseError/permissionFailure(_:)` for a user a private share doesn't list.
    public func shareMetadata(shortGUID: String, fetchingRootRecord: Bool = false) async throws -> CloudShare.Metadata {
        try await shareMetadata(shortGUID: shortGUID, fetchingRootRecord: fetchingRootRecord, as: .signedIn)
    }

    func shareMetadata(shortGUID: String, fetchingRootRecord: Bool, as caller: Caller) async throws
        -> CloudShare.Metadata
    {
        try await cloudServer.shareMetadata(shortGUID: shortGUID, fetchingRootRecord: fetchingRootRecord) {
            try await self.user(of: caller)
        }
    }

    /// Every share a user owns or takes part in (invited, accepted, removed), with its owner, by owner, zone and
    /// name: what an admin view of a user's shares lists.
    package func shares(involving user: String) async throws -> [(owner: String, record: CloudRecord)] {
        try await cloudServer.shares(involving: user)
    }

    /// The share with this short GUID, and the user whose database holds it: what a server serving share URLs
    /// looks up.
    package func share(withShortGUID shortGUID: String) async throws -> (owner: String, record: CloudRecord)? {
        try await cloudServer.share(withShortGUID: shortGUID)
    }

    /// The databases other users' requests changed since the last call: an owner's private database a
    /// participant wrote to or accepted a share of, a user's shared database that an owner's change (or their own
    /// share being accepted or left) changed. For a server that sends pushes of its own.
    package func takeDatabasesChangedByOthers() -> Set<UserDatabaseID> {
        cloudServer.takeDatabasesChangedByOthers()
    }
}
