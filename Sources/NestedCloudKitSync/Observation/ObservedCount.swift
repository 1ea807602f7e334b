import Foundation
import NestedCloudKitCodable
import Observation

/// How many models a query matches, for a view to show and keep current, counted in SQLite without decoding any.
///
/// ```swift
/// @State private var open = ObservedCount(ModelQuery(Note.self).filter(.equals(.isDone, false)))
/// …
/// Text("\(open.count) open").task { open.store = store }
/// ```
///
/// As ``ObservedQuery``: nothing is read when it is made; the first read of ``count``, ``isLoaded`` or ``error``
/// with a ``store`` starts an observation (``SyncStore/observeCount(_:)``). Changing ``query`` or ``store`` counts
/// again.
@MainActor
@Observable
public final class ObservedCount<Model: QueryableModel> {
    /// The number of models the query matched at the last change (its limit and offset apply); 0 until the first
    /// result.
    public var count: Int { result.value }

    /// Whether a result arrived.
    public var isLoaded: Bool { result.isLoaded }

    /// Why the last count failed (``SyncError/invalidQuery(_:)``, a closed store); `nil` while counts succeed.
    public var error: (any Error)? { result.error }

    /// The query; setting another one counts it.
    public var query: ModelQuery<Model> {
        didSet { if query != oldValue { result.change(Self.read(query)) } }
    }

    /// The store it counts in; `nil` until the view has one. Setting another one observes it.
    public var store: SyncStore? {
        get { result.store }
        set { result.store = newValue }
    }

    @ObservationIgnored private let result: StoreResult<Int>

    /// How many observations it started, for the tests.
    var observationsStarted: Int { result.observationsStarted }

    /// The number of models a query matches in a store, counted once something reads it.
    ///
    /// - Parameters:
    ///   - query: The query.
    ///   - store: The store, or `nil` to give it later (``store``).
    public init(_ query: ModelQuery<Model>, in store: SyncStore? = nil) {
        self.query = query
        result = StoreResult(0, store: store, read: Self.read(query))
    }

    private static func read(_ query: ModelQuery<Model>) -> (SyncStore) -> StoreObservation<Int> {
        { store in store.observeCount(query) }
    }
}
