import Foundation

/// The `users/caller` response: `users`, an array holding the current user's identity dictionary
/// (`userRecordName`, `nameComponents`, `lookupInfo`), as the reference documents it.
///
/// A top-level `userRecordName` is read too: the older `users/current` answers in that form, and CloudKit JS's
/// `fetchCurrentUserIdentity` resolves to the identity dictionary itself.
struct WireCallerResponse: Codable, Hashable, Sendable {
    struct Identity: Codable, Hashable, Sendable {
        var userRecordName: String?
    }

    var users: [Identity]?
    var userRecordName: String?

    /// The caller's user record name, wherever the response put it.
    var callerRecordName: String? {
        users?.lazy.compactMap(\.userRecordName).first ?? userRecordName
    }
}
