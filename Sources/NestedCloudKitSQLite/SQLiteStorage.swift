import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer

/// The SQLite storage engine: each database a file (``SQLiteFile``), each transaction one of the file's. A
/// ``SQLiteCloudDatabase`` is one file; a ``SQLiteCloudServer`` a file per user and scope.
package struct SQLiteStorage: CloudStorageEngine {
    private let file: @Sendable (UserDatabaseID) async throws -> SQLiteFile
    private let users: @Sendable (CloudNotification.DatabaseScope) -> [String]
    private let clock: any CloudClock

    /// One file, every request its user's: the current user's private database.
    init(file: SQLiteFile, clock: any CloudClock) {
        self.file = { _ in file }
        users = { $0 == .private ? [CloudRecord.ZoneID.currentUserOwnerName] : [] }
        self.clock = clock
    }

    /// A server's files, opened (and made) as they are first asked for.
    init(files: SQLiteServerFiles, clock: any CloudClock) {
        file = { try await files.file(of: $0.userRecordName, $0.scope) }
        users = { files.users($0) }
        self.clock = clock
    }

    package func users(_ scope: CloudNotification.DatabaseScope) -> [String] { users(scope) }

    package func read<T: Sendable>(
        _ database: UserDatabaseID, _ body: @escaping @Sendable (SQLiteTransaction) throws -> T
    )
        async throws -> T
    {
        try await file(database).read(body)
    }

    package func write<T: Sendable>(
        _ database: UserDatabaseID, _ body: @escaping @Sendable (inout SQLiteTransaction) throws -> T
    ) async throws -> T {
        try await file(database).write(now: clock.now(), body)
    }
}
