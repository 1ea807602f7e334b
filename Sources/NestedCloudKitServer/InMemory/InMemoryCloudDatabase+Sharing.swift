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
        try await cloudServer.acceptShare(shortGUID: shortGUID) { try await self.signedInUser() }
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
        try await cloudServer.shareMetadata(shortGUID: shortGUID, fetchingRootRecord: fetchingRootRecord) {
            try await self.signedInUser()
        }
    }
}
