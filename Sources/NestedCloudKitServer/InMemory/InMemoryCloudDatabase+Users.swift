import Foundation
import NestedCloudKitCodable

extension InMemoryCloudDatabase {
    /// One user's private database on this server, whoever is signed in: alice's and bob's devices in one test.
    ///
    /// ```swift
    /// let server = InMemoryCloudDatabase()
    /// let alice = server.privateDatabase(of: "_alice")
    /// let bob = server.sharedDatabase(of: "_bob")
    /// ```
    ///
    /// Its requests go through the server's ``network``: its counts, faults and latency; an account status set
    /// with ``setAccountStatus(_:)`` applies to every user.
    public nonisolated func privateDatabase(of userRecordName: String) -> UserCloudDatabase {
        UserCloudDatabase(server: self, userRecordName: userRecordName, scope: .private)
    }

    /// One user's shared database on this server: the zones others share with them, named by their owners
    /// (`CloudRecord.ZoneID(zoneName: "Lists", ownerName: "_alice")`), holding what the shares they accepted
    /// cover; see ``UserCloudDatabase``.
    public nonisolated func sharedDatabase(of userRecordName: String) -> UserCloudDatabase {
        UserCloudDatabase(server: self, userRecordName: userRecordName, scope: .shared)
    }
}

extension InMemoryCloudDatabase: MultiUserCloudServer, StandaloneCloudDatabase {
    /// One user's private or shared database; the server keeps no files, so `fileName` is ignored.
    package nonisolated func database(
        of userRecordName: String, scope: CloudNotification.DatabaseScope, fileName: String?
    ) -> UserCloudDatabase {
        UserCloudDatabase(server: self, userRecordName: userRecordName, scope: scope)
    }

    /// Expires every change token of every user; see ``expireEveryUsersChangeTokens()``.
    package func expireEveryChangeToken() {
        expireEveryUsersChangeTokens()
    }

    /// Nothing to let go of: the server lives in memory.
    package nonisolated func close() {}
}
