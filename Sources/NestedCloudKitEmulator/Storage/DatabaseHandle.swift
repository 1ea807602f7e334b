import Foundation
import NIOConcurrencyHelpers
import NestedCloudKitCodable
import NestedCloudKitRules
import NestedCloudKitServer

/// One database of the emulator: the portable database that holds its records, the lock its writes take turns on,
/// and its subscriptions.
final class DatabaseHandle: Sendable {
    let key: DatabaseKey
    let database: any CloudRecordStoringDatabase
    /// The database itself when it is outside any user's (a public database): its tokens expire and its file
    /// closes through it. A user's database goes with its server.
    let standalone: (any StandaloneCloudDatabase)?
    let writes = AsyncSerialLock()
    let subscriptions: SubscriptionStore
    /// The user record name the database stamps its records with, which the wire shows as the owner's.
    let databaseUserRecordName: String?
    private let revisions: RevisionCounter
    private let currentRevision: NIOLockedValueBox<Int>

    init(
        key: DatabaseKey, database: any CloudRecordStoringDatabase, standalone: (any StandaloneCloudDatabase)?,
        subscriptions: SubscriptionStore, databaseUserRecordName: String?, revisions: RevisionCounter
    ) {
        self.key = key
        self.database = database
        self.standalone = standalone
        self.subscriptions = subscriptions
        self.databaseUserRecordName = databaseUserRecordName
        self.revisions = revisions
        currentRevision = NIOLockedValueBox(revisions.next())
    }

    /// A number that changes with each write to the database's records or zones, and is never given again, even to
    /// a database made after a reset: the dashboard reads a page of records again only when it changed.
    var revision: Int { currentRevision.withLockedValue { $0 } }

    /// Notes that the database's records or zones changed.
    func noteWrite() {
        let next = revisions.next()
        currentRevision.withLockedValue { $0 = next }
    }

    /// Runs `body` holding the database's write lock.
    func exclusively<T: Sendable>(_ body: @Sendable () async throws(ServerError) -> T) async throws(ServerError) -> T {
        let result: Result<T, ServerError> = await writes.withLock {
            do throws(ServerError) {
                return .success(try await body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
