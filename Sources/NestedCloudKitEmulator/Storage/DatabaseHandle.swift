import Foundation
import NestedCloudKitCodable

/// One database of the emulator: the portable database that holds its records, the lock its writes take turns on,
/// and its subscriptions.
final class DatabaseHandle: Sendable {
    let key: DatabaseKey
    let database: any CloudDatabase
    let writes = AsyncSerialLock()
    let subscriptions: SubscriptionStore
    /// The user record name the database stamps its records with, which the wire shows as the owner's.
    let databaseUserRecordName: String?

    init(
        key: DatabaseKey, database: any CloudDatabase, subscriptions: SubscriptionStore, databaseUserRecordName: String?
    ) {
        self.key = key
        self.database = database
        self.subscriptions = subscriptions
        self.databaseUserRecordName = databaseUserRecordName
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
