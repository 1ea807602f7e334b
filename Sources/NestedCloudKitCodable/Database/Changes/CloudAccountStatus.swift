/// Whether the user can use the private and shared databases: the portable form of `CKAccountStatus`.
public enum CloudAccountStatus: String, Sendable, Hashable, Codable {
    /// Signed in: the private database is available.
    case available
    /// No account: the user isn't signed in (or, for Web Services, no web auth token was given). Only the public
    /// database can be read.
    case noAccount
    /// Parental controls or device management keep the app from the account.
    case restricted
    /// Signed in, but the account isn't ready (iCloud is still setting up, or the user must verify the account):
    /// try again later.
    case temporarilyUnavailable
    /// The status couldn't be determined (CloudKit's `couldNotDetermine`): try again later.
    case couldNotDetermine
}
