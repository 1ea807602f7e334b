import Foundation

/// `users/caller` and `users/current`: who the request's user is; `users/discover`, `users/lookup/email` and
/// `users/lookup/id`: the users who made themselves discoverable (``EmulatorUserIdentity``).
enum UsersEndpoint {
    /// The caller's identity. The reference shows a single user dictionary while our client and others read a
    /// `users` list; the answer holds both (FIDELITY.md).
    static func caller(_ context: DatabaseRequest) throws(ServerError) -> JSONValue {
        guard let name = context.caller.userName else {
            throw context.state.authenticationRequired(context.request, reason: "users/caller needs a signed-in user")
        }
        let user = identity(name, context.state.users.identity(of: name))
        guard case .object(var members) = user else { return user }
        members["users"] = [user]
        return .object(members)
    }

    static func current(_ context: DatabaseRequest) throws(ServerError) -> JSONValue {
        guard let name = context.caller.userName else {
            throw context.state.authenticationRequired(context.request, reason: "users/current needs a signed-in user")
        }
        return identity(name, context.state.users.identity(of: name))
    }

    /// `users/discover`: a UserIdentity for each `lookupInfos` entry (an email address, a phone number or a user
    /// record name) that names a discoverable user, in the order asked, each with the lookup info it was found by.
    /// An entry that names no discoverable user has no answer: a user who didn't allow it isn't found.
    static func discover(_ context: DatabaseRequest) throws(ServerError) -> JSONValue {
        try requireDiscovery("users/discover", context)
        guard let infos = context.body["lookupInfos"]?.array, !infos.isEmpty else {
            // Live CloudKit's answer to an empty list (MistKit #28).
            throw .badRequest(
                "discover request contains an invalid user id: give lookupInfos, each with an "
                    + "emailAddress, a phoneNumber or a userRecordName")
        }
        let directory = context.state.users
        var users: [JSONValue] = []
        for info in infos {
            let found =
                if let email = info["emailAddress"]?.string {
                    directory.user(emailAddress: email)
                } else if let phone = info["phoneNumber"]?.string {
                    directory.user(phoneNumber: phone)
                } else if let recordName = info["userRecordName"]?.string {
                    directory.user(recordName: recordName)
                } else {
                    throw ServerError.badRequest(
                        "each of lookupInfos needs an emailAddress, a phoneNumber or a userRecordName")
                }
            guard let found else { continue }
            users.append(userIdentity(found.name, found.identity, lookupInfo: info))
        }
        return ["users": .array(users)]
    }

    /// `users/lookup/email`: the discoverable users with the addresses of `users` (`[{"emailAddress": ...}]`).
    static func lookUpByEmail(_ context: DatabaseRequest) throws(ServerError) -> JSONValue {
        try lookUp("users/lookup/email", key: "emailAddress", context) { context.state.users.user(emailAddress: $0) }
    }

    /// `users/lookup/id`: the discoverable users with the record names of `users` (`[{"userRecordName": ...}]`).
    static func lookUpByID(_ context: DatabaseRequest) throws(ServerError) -> JSONValue {
        try lookUp("users/lookup/id", key: "userRecordName", context) { context.state.users.user(recordName: $0) }
    }

    /// Each entry of `users` that names a discoverable user by `key`, answered as a user dictionary (the
    /// reference's `userRecordName`, `firstName`, `lastName`, and `emailAddress` for a lookup by it) that is also a
    /// UserIdentity (`nameComponents`, `lookupInfo`), as newer clients read it.
    private static func lookUp(
        _ endpoint: String, key: String, _ context: DatabaseRequest,
        find: (String) -> (name: String, identity: EmulatorUserIdentity)?
    ) throws(ServerError) -> JSONValue {
        try requireDiscovery(endpoint, context)
        guard let wanted = context.body["users"]?.array, !wanted.isEmpty else {
            throw .badRequest("\(endpoint) needs users: [{\"\(key)\": ...}]")
        }
        var users: [JSONValue] = []
        for item in wanted {
            guard let value = item[key]?.string, !value.isEmpty else {
                throw .badRequest("each of \(endpoint)'s users needs a \(key)")
            }
            guard let found = find(value) else { continue }
            guard
                case .object(var members) = userIdentity(found.name, found.identity, lookupInfo: [key: .string(value)])
            else { continue }
            if key == "emailAddress" { members["emailAddress"] = .string(value) }
            users.append(.object(members))
        }
        return ["users": .array(users)]
    }

    /// Discovery is a signed-in user's question about the public database, as CloudKit answers it: another
    /// database, a server-to-server key or no user is refused (MistKit #28, against live CloudKit).
    private static func requireDiscovery(_ endpoint: String, _ context: DatabaseRequest) throws(ServerError) {
        switch context.key.scope {
        case .public: break
        case .private:
            throw .badRequest("endpoint not applicable in the database type 'privatedb': \(endpoint) is public")
        case .shared: throw .badRequest("endpoint not applicable in the database type 'sharedb': \(endpoint) is public")
        }
        if case .server = context.caller {
            throw ServerError(
                .authenticationFailed, "\(endpoint) needs a signed-in user's web auth token, not a server-to-server key"
            )
        }
        guard context.caller.userName != nil else {
            throw context.state.authenticationRequired(context.request, reason: "\(endpoint) needs a signed-in user")
        }
    }

    /// A user dictionary and a UserIdentity at once, for a discoverable user.
    private static func userIdentity(_ name: String, _ identity: EmulatorUserIdentity, lookupInfo: JSONValue)
        -> JSONValue
    {
        [
            "userRecordName": .string(Caller.userRecordName(for: name)), "firstName": .string(identity.givenName),
            "lastName": .string(identity.familyName),
            "nameComponents": ["givenName": .string(identity.givenName), "familyName": .string(identity.familyName)],
            "lookupInfo": lookupInfo,
        ]
    }

    private static func identity(_ name: String, _ discoverable: EmulatorUserIdentity?) -> JSONValue {
        let given = discoverable?.givenName ?? name
        let family = discoverable?.familyName ?? ""
        return [
            "userRecordName": .string(Caller.userRecordName(for: name)), "firstName": .string(given),
            "lastName": .string(family),
            "nameComponents": ["givenName": .string(given), "familyName": .string(family)],
            "isDiscoverable": .bool(discoverable != nil),
        ]
    }
}
