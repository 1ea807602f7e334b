import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

/// The in-memory server's storage engine: every user's private and shared databases in dictionaries, behind one
/// lock, each transaction run whole while it is held.
///
/// A write transaction takes its database out of the dictionary while it runs, so that changing it copies nothing,
/// and puts it back after. It can't undo what a body changed before throwing; ``CloudServer`` checks before it writes.
package final class InMemoryStorage: CloudStorageEngine {
    /// What the lock guards.
    struct State: Sendable {
        var databases: [UserDatabaseID: InMemoryUserDatabase] = [:]
        /// The generation the next new change log gets; one counter for every log of every user, so that a token
        /// is never valid in a log it wasn't made for.
        var nextGeneration = 1
        /// The last change tag given; one counter for the whole server.
        var lastChangeTag = 0

        mutating func takeGeneration() -> Int {
            defer { nextGeneration += 1 }
            return nextGeneration
        }
    }

    private let state: Locked<State>
    private let clock: any CloudClock
    /// Where copies of the asset files saved are kept, as CloudKit keeps a copy of what it uploads.
    package let assetCopies: URL

    /// Storage with one user's empty private database.
    package init(firstUser: String, clock: any CloudClock, assetCopies: URL) {
        var state = State()
        state.databases[.privateDatabase(of: firstUser)] = InMemoryUserDatabase(generation: 0)
        self.state = Locked(state)
        self.clock = clock
        self.assetCopies = assetCopies
    }

    package func users(_ scope: CloudNotification.DatabaseScope) -> [String] {
        state.withLock { state in
            state.databases.keys.filter { $0.scope == scope }.map(\.userRecordName).sorted()
        }
    }

    /// Makes a user's private database if it doesn't exist: a user the server hasn't met yet gets an empty one.
    package func makeDatabase(_ database: UserDatabaseID) {
        state.withLock { state in
            guard state.databases[database] == nil else { return }
            state.databases[database] = Self.empty(database, generation: state.takeGeneration())
        }
    }

    private func transaction<T>(
        _ database: UserDatabaseID, now: Date, _ body: (inout InMemoryTransaction) throws -> T
    ) throws -> T {
        try state.withLock { state in
            // Taken out rather than copied: changing a copy the dictionary still holds would copy it whole.
            var transaction = InMemoryTransaction(
                database: Self.take(database, from: &state), now: now,
                changeTags: ChangeTagSequence(after: state.lastChangeTag), nextGeneration: state.nextGeneration)
            defer {
                state.databases[database] = transaction.database
                state.lastChangeTag = transaction.changeTags.last
                state.nextGeneration = transaction.nextGeneration
            }
            return try body(&transaction)
        }
    }

    /// A read takes no time from the clock: only writes stamp records, so a test's stepping clock counts writes.
    /// The databases are in memory, so the lock is held for the body's work alone, never across I/O.
    package func read<T: Sendable>(
        _ database: UserDatabaseID, _ body: @escaping @Sendable (InMemoryTransaction) throws -> T
    ) async throws -> T {
        try transaction(database, now: .distantPast) { try body($0) }
    }

    package func write<T: Sendable>(
        _ database: UserDatabaseID, _ body: @escaping @Sendable (inout InMemoryTransaction) throws -> T
    ) async throws -> T {
        try transaction(database, now: clock.now(), body)
    }

    /// The items with each asset that came as a file pointing to a copy of it: CloudKit keeps a copy of what it
    /// uploads, so the stored asset no longer depends on the caller's file.
    package func storingAssets(of operations: [CloudRecordOperation], contents: [AssetKey: Data]) throws
        -> [CloudRecordOperation]
    {
        do {
            return try operations.map { operation in
                try operation.mappingRecord {
                    try AssetFileContents.storingCopies(of: $0, contents: contents, in: assetCopies)
                }
            }
        } catch {
            throw CloudDatabaseError.internalError(
                "the in-memory database couldn't copy an asset's file into \(assetCopies.path): \(error)")
        }
    }

    /// Starts every log of a database again in a new generation, so that every token given so far is expired.
    package func expireChangeTokens(of database: UserDatabaseID) {
        state.withLock { state in
            let first = state.takeGeneration()
            var stored = state.databases.removeValue(forKey: database) ?? Self.empty(database, generation: first)
            state.nextGeneration = stored.expireTokens(firstGeneration: first) + 1
            state.databases[database] = stored
        }
    }

    /// Every record of a database, for tests that look at the whole state.
    package func allRecords(of database: UserDatabaseID) -> [CloudRecord] {
        state.withLock { state in
            state.databases[database].map { Array($0.storage.records.values) } ?? []
        }
    }

    /// A database taken out of the state, or a new one.
    private static func take(_ database: UserDatabaseID, from state: inout State) -> InMemoryUserDatabase {
        state.databases.removeValue(forKey: database) ?? empty(database, generation: state.takeGeneration())
    }

    private static func empty(_ database: UserDatabaseID, generation: Int) -> InMemoryUserDatabase {
        database.scope == .shared ? .shared(generation: generation) : InMemoryUserDatabase(generation: generation)
    }
}
