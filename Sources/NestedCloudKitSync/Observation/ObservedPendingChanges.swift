import Foundation
import NestedCloudKitCodable
import Observation

/// The changes waiting to sync, for a debug or "not yet synced" screen to list and keep current.
///
/// ```swift
/// struct WaitingToSync: View {
///     @Environment(\.syncEngine) private var engine   // an `@Entry` of the app's EnvironmentValues
///     @State private var queue = ObservedPendingChanges()
///
///     var body: some View {
///         List(queue.changes, id: \.recordID) { change in
///             LabeledContent(change.recordID.recordName, value: change.isHalted ? "Stopped" : "Waiting")
///                 .swipeActions {
///                     Button("Retry") { Task { try await engine.store.retryHaltedChange(change.recordID) } }
///                     Button("Discard", role: .destructive) {
///                         Task { try await engine.discardPendingChange(change.recordID) }
///                     }
///                 }
///         }
///         .task { queue.store = engine.store }
///     }
/// }
/// ```
///
/// As ``ObservedQuery``: nothing is read when it is made; the first read of ``changes``, ``isLoaded`` or ``error``
/// with a ``store`` starts an observation (``SyncStore/observePendingChanges()``).
@MainActor
@Observable
public final class ObservedPendingChanges {
    /// The changes the server doesn't have yet, as ``SyncStore/pendingChanges()`` lists them; empty until the first
    /// result.
    public var changes: [PendingChange] { result.value }

    /// Whether a result arrived.
    public var isLoaded: Bool { result.isLoaded }

    /// Why the last read failed (a closed store); `nil` while reads succeed.
    public var error: (any Error)? { result.error }

    /// The store whose queue it lists; `nil` until the view has one. Setting another one observes it.
    public var store: SyncStore? {
        get { result.store }
        set { result.store = newValue }
    }

    @ObservationIgnored private let result: StoreResult<[PendingChange]>

    /// The queue of a store, read once something reads it.
    ///
    /// - Parameter store: The store, or `nil` to give it later (``store``).
    public init(in store: SyncStore? = nil) {
        result = StoreResult([], store: store, read: { $0.observePendingChanges() })
    }
}
