/// How a test user appears to user discovery (`users/discover`, `users/lookup/email`, `users/lookup/id`): the
/// name and the email address or phone number other users find them by. A user signed in with one is
/// discoverable, as a CloudKit user who allowed it ("Look Me Up by Email") is; one signed in without stays hidden,
/// and lookups don't find them.
public struct EmulatorUserIdentity: Sendable, Hashable, Codable {
    /// The given name, `nameComponents.givenName` (and `firstName`) in the answers.
    public var givenName: String
    /// The family name, `nameComponents.familyName` (and `lastName`).
    public var familyName: String
    /// The address `users/discover` and `users/lookup/email` find the user by.
    public var emailAddress: String?
    /// The number `users/discover` finds the user by.
    public var phoneNumber: String?

    /// An identity to discover a test user by.
    public init(givenName: String, familyName: String = "", emailAddress: String? = nil, phoneNumber: String? = nil) {
        self.givenName = givenName
        self.familyName = familyName
        self.emailAddress = emailAddress
        self.phoneNumber = phoneNumber
    }
}
