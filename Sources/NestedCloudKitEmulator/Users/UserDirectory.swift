import NIOConcurrencyHelpers

/// The test users who signed in as discoverable, by name: who `users/discover` and the lookups find, and by what.
final class UserDirectory: Sendable {
    private let identities = NIOLockedValueBox<[String: EmulatorUserIdentity]>([:])

    /// Makes `user` discoverable as `identity`, replacing an earlier identity of theirs.
    func publish(_ user: String, as identity: EmulatorUserIdentity) {
        identities.withLockedValue { $0[user] = identity }
    }

    /// The identity of a discoverable user.
    func identity(of user: String) -> EmulatorUserIdentity? {
        identities.withLockedValue { $0[user] }
    }

    /// The discoverable user with this email address (compared without case, as addresses are).
    func user(emailAddress: String) -> (name: String, identity: EmulatorUserIdentity)? {
        let wanted = emailAddress.lowercased()
        return first { $0.emailAddress?.lowercased() == wanted }
    }

    /// The discoverable user with this phone number (compared by its digits).
    func user(phoneNumber: String) -> (name: String, identity: EmulatorUserIdentity)? {
        let wanted = phoneNumber.filter(\.isNumber)
        guard !wanted.isEmpty else { return nil }
        return first { $0.phoneNumber?.filter(\.isNumber) == wanted }
    }

    /// The discoverable user with this user record name.
    func user(recordName: String) -> (name: String, identity: EmulatorUserIdentity)? {
        identities.withLockedValue { identities in
            identities.first { Caller.userRecordName(for: $0.key) == recordName }.map { ($0.key, $0.value) }
        }
    }

    func reset() {
        identities.withLockedValue { $0 = [:] }
    }

    /// The first discoverable user, in name order so that a duplicate address always finds the same one.
    private func first(where matches: (EmulatorUserIdentity) -> Bool) -> (name: String, identity: EmulatorUserIdentity)?
    {
        identities.withLockedValue { identities in
            identities.sorted { $0.key < $1.key }.first { matches($0.value) }.map { ($0.key, $0.value) }
        }
    }
}
