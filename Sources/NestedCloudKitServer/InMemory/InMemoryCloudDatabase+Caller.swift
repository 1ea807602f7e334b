import NestedCloudKitCodable

extension InMemoryCloudDatabase {
    /// Who makes a request, and in which of their databases: the server's own `CloudDatabase` calls are the
    /// signed-in user's, in their private database; a ``ScopedDatabase`` names its user and scope.
    struct Caller: Sendable, Hashable {
        /// The user; `nil` for whoever is signed in.
        var userRecordName: String?
        /// The private or the shared database.
        var scope: CloudNotification.DatabaseScope

        /// The signed-in user's private database.
        static let signedIn = Caller(userRecordName: nil, scope: .private)
    }
}
