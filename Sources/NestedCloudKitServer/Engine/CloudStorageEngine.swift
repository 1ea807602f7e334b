import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

/// One of a server's databases: a user's private database, or their shared database (a copy of what others share
/// with them).
package struct UserDatabaseID: Hashable, Sendable {
    package var userRecordName: String
    package var scope: CloudNotification.DatabaseScope

    package init(userRecordName: String, scope: CloudNotification.DatabaseScope) {
        self.userRecordName = userRecordName
        self.scope = scope
    }

    /// A user's private database.
    package static func privateDatabase(of user: String) -> UserDatabaseID {
        UserDatabaseID(userRecordName: user, scope: .private)
    }

    /// A user's shared database.
    package static func sharedDatabase(of user: String) -> UserDatabaseID {
        UserDatabaseID(userRecordName: user, scope: .shared)
    }
}

/// Where a server keeps its users' databases, as transactions on one database at a time: the storage engine under
/// ``CloudServer``, which implements every `CloudDatabase` request once over it. A new backend is a conformer (this
/// protocol and its ``CloudStorageTransaction``) and the conformance suite.
///
/// A database is made the first time a transaction asks for it. A transaction sees one consistent state of its
/// database, and a write transaction's changes are all kept or, when its body throws, none of them. The in-memory
/// engine can't undo a change once made, so ``CloudServer`` checks everything before it writes: a body that writes
/// doesn't throw afterwards for a reason of its own, only for the storage's failures.
package protocol CloudStorageEngine: Sendable {
    /// One database in one transaction.
    associatedtype Transaction: CloudStorageTransaction

    /// The users who have a database of this scope.
    func users(_ scope: CloudNotification.DatabaseScope) throws -> [String]

    /// Runs `body` on a consistent read of a database, without blocking the caller's thread.
    func read<T: Sendable>(_ database: UserDatabaseID, _ body: @escaping @Sendable (Transaction) throws -> T)
        async throws -> T

    /// Runs `body` in a write transaction of a database: all of it is kept, or none.
    func write<T: Sendable>(_ database: UserDatabaseID, _ body: @escaping @Sendable (inout Transaction) throws -> T)
        async throws -> T

    /// The items of a modify request as the storage keeps their assets, before they are planned: a storage that
    /// keeps asset files rather than their contents points each at its own copy (what a save answers, too).
    ///
    /// - Parameter contents: The contents read from the assets' files, by where they are.
    func storingAssets(of operations: [CloudRecordOperation], contents: [AssetKey: Data]) throws
        -> [CloudRecordOperation]
}

extension CloudStorageEngine {
    /// The items as they are: the storage keeps the assets' contents it is given with each write.
    package func storingAssets(of operations: [CloudRecordOperation], contents: [AssetKey: Data]) throws
        -> [CloudRecordOperation]
    {
        operations
    }
}
