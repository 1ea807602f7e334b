import Foundation
import NestedCloudKitCodable
import NestedCloudKitEmulator
import NestedCloudKitServer
import NestedCloudKitSync
import NestedCloudKitWebServices

/// One user's device: a store, and an engine syncing the user's private and shared databases through Web
/// Services, each client with a web auth token of its own (tokens rotate with every answer).
struct SharingDevice: Sendable {
    let user: String
    let emulator: CloudKitEmulator
    let container: String
    let store: SyncStore
    let engine: SyncEngine

    init(_ user: String, emulator: CloudKitEmulator, container: String, clock: VirtualCloudClock) async throws {
        self.user = user
        self.emulator = emulator
        self.container = container
        store = try SyncStore.inMemory(clock: clock)
        engine = SyncEngine(
            store: store, database: try await Self.database(user, .private, emulator: emulator, container: container),
            sharedDatabase: try await Self.database(user, .shared, emulator: emulator, container: container),
            configuration: SyncConfiguration(retry: SyncRetryPolicy(jitter: 0)))
    }

    /// A new client of one of the user's databases.
    func database(_ scope: CloudKitWebServicesConfiguration.Database) async throws -> CloudKitWebServicesDatabase {
        try await Self.database(user, scope, emulator: emulator, container: container)
    }

    static func database(
        _ user: String, _ scope: CloudKitWebServicesConfiguration.Database, emulator: CloudKitEmulator,
        container: String
    ) async throws -> CloudKitWebServicesDatabase {
        try CloudKitWebServicesDatabase(
            configuration: CloudKitWebServicesConfiguration(
                containerIdentifier: container, environment: .production, database: scope,
                authentication: .apiToken("sharing-example", webAuthToken: await emulator.signIn(user: user)),
                serverURL: emulator.url, retryPolicy: .never))
    }

    /// Syncs, and says what arrived; the sync's events, in order.
    @discardableResult
    func sync() async throws -> [SyncEvent] {
        let summary = try await engine.sync()
        for event in summary.events {
            if case .fetchedChanges(let changes) = event, !changes.saved.isEmpty || !changes.deleted.isEmpty {
                print("   \(user) fetched \(changes.saved.count) saved, \(changes.deleted.count) deleted")
            }
        }
        return summary.events
    }

    /// The list's title and its items, sorted.
    func describeList(in zone: CloudRecord.ZoneID) async throws -> [String] {
        let title = try await store.fetch(ShoppingList.self, id: "groceries", in: zone)?.title ?? "(no list)"
        let items = try await store.fetchAll(Item.self, in: zone).sorted { $0.id < $1.id }
        return [title] + items.map { "[\($0.done ? "x" : " ")] \($0.text)" }
    }
}
