import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite
import NestedCloudKitServer
import TestSupport
import Testing

extension ShareAcceptingDatabase {
    package func shareMetadata(shortGUID: String) async throws -> CloudShare.Metadata {
        try await shareMetadata(shortGUID: shortGUID, fetchingRootRecord: false)
    }
}

/// A server with several users, for the tests of the shared database, which run against each: the simulated
/// server in memory and the directory of SQLite files.
package struct SharingServerBackend: Sendable, CustomTestStringConvertible {
    package let name: String
    /// Makes an empty server with a clock, and returns how to reach each user's private and shared database on it.
    package let make: @Sendable (any CloudClock) throws -> SharingServerUsers

    package var testDescription: String { name }

    package static let all: [SharingServerBackend] = [.inMemory, .sqlite]

    package static let inMemory = SharingServerBackend(name: "in-memory") { clock in
        let server = InMemoryCloudDatabase(userRecordName: "_alice", clock: clock)
        return SharingServerUsers(
            privateDatabase: { server.privateDatabase(of: $0) }, sharedDatabase: { server.sharedDatabase(of: $0) })
    }

    package static let sqlite = SharingServerBackend(name: "SQLite") { clock in
        let server = try SQLiteCloudServer(directory: temporaryDatabasePath(), clock: clock)
        return SharingServerUsers(
            privateDatabase: { try server.privateDatabase(of: $0) },
            sharedDatabase: { try server.sharedDatabase(of: $0) })
    }
}

/// Each user's databases on one server.
package struct SharingServerUsers: Sendable {
    package let privateDatabase: @Sendable (String) throws -> any ShareAcceptingDatabase
    package let sharedDatabase: @Sendable (String) throws -> any ShareAcceptingDatabase
}
