import Foundation

/// `users/caller` and `users/current`: who the request's user is.
enum UsersEndpoint {
    /// The caller's identity. The reference shows a single user dictionary while our client and others read a
    /// `users` list; the answer holds both (FIDELITY.md).
    static func caller(_ context: DatabaseRequest) throws(ServerError) -> JSONValue {
        guard let name = context.caller.userName else {
            throw context.state.authenticationRequired(context.request, reason: "users/caller needs a signed-in user")
        }
        let user = identity(name)
        guard case .object(var members) = user else { return user }
        members["users"] = [user]
        return .object(members)
    }

    static func current(_ context: DatabaseRequest) throws(ServerError) -> JSONValue {
        guard let name = context.caller.userName else {
            throw context.state.authenticationRequired(context.request, reason: "users/current needs a signed-in user")
        }
        return identity(name)
    }

    private static func identity(_ name: String) -> JSONValue {
        [
            "userRecordName": .string(Caller.userRecordName(for: name)), "firstName": .string(name), "lastName": "",
            "nameComponents": ["givenName": .string(name)], "isDiscoverable": false,
        ]
    }
}
