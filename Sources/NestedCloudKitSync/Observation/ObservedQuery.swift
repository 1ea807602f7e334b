import Foundation
import NestedCloudKitCodable
import Observation

/// A query's models that a view holds and that follow the store: what SwiftData's `@Query` and SQLiteData's
/// `@FetchAll` give a view.
///
/// ```swift
/// struct OpenNotes: View {
///     @Environment(\.syncStore) private var store   // an `@Entry` of the app's EnvironmentValues
///     @State private var notes = ObservedQuery(
///         ModelQuery(Note.self).filter(.equals(.isDone, false)).sorted(by: .descending(.creationDate)))
///
///     var body: some View {
///         List(notes.models) { note in Text(note.title) }
///             .task { notes.store = store }
///     }
/// }
/// ```
///
/// Nothing is read when it is made, so a view can make it in its initializer, before it has a store, and
/// SwiftUI's rebuilding of the view doesn't read the store again: the first read of ``models``, ``isLoaded`` or
/// ``error`` with a ``store`` starts an observation (``SyncStore/observe(_:)-8i5ke``), which delivers a new result on
/// the main actor after every transaction that changes it. Changing ``query`` or ``store`` observes again (setting
/// the same one changes nothing); the previous result stays until the new one arrives. It stops observing when
/// released.
@MainActor
@Observable
public final class ObservedQuery<Model: QueryableModel> {
    /// The models the query matched at the last change; empty until the first result.
    public var models: [Model] { result.value }

    /// Whether a result arrived.
    public var isLoaded: Bool { result.isLoaded }

    /// Why the last read failed (``SyncError/invalidQuery(_:)``, a closed store); `nil` while reads succeed.
    public var error: (any Error)? { result.error }

    /// The query; setting another one observes it.
    public var query: ModelQuery<Model> {
        didSet { if query != oldValue { result.change(Self.read(query, isDuplicate)) } }
    }

    /// The store it reads; `nil` until the view has one. Setting another one observes it.
    public var store: SyncStore? {
        get { result.store }
        set { result.store = newValue }
    }

    @ObservationIgnored private let result: StoreResult<[Model]>
    /// Which results are equal, so that an equal one isn't delivered: `==` for an `Equatable` model.
    @ObservationIgnored private let isDuplicate: (@Sendable ([Model], [Model]) -> Bool)?

    /// How many observations it started, for the tests.
    var observationsStarted: Int { result.observationsStarted }

    /// The models a query matches in a store, read once something reads them.
    ///
    /// - Parameters:
    ///   - query: The query.
    ///   - store: The store, or `nil` to give it later (``store``).
    ///
    /// A change that leaves the models equal delivers nothing when `Model` is `Equatable` and this call knows it.
    public convenience init(_ query: ModelQuery<Model>, in store: SyncStore? = nil) {
        self.init(query, in: store, removingDuplicates: nil)
    }

    init(
        _ query: ModelQuery<Model>, in store: SyncStore?,
        removingDuplicates isDuplicate: (@Sendable ([Model], [Model]) -> Bool)?
    ) {
        self.query = query
        self.isDuplicate = isDuplicate
        result = StoreResult([], store: store, read: Self.read(query, isDuplicate))
    }

    private static func read(
        _ query: ModelQuery<Model>, _ isDuplicate: (@Sendable ([Model], [Model]) -> Bool)?
    ) -> (SyncStore) -> StoreObservation<[Model]> {
        { store in store.observe(query, removingDuplicates: isDuplicate) }
    }
}

extension ObservedQuery where Model: Equatable {
    /// The models a query matches in a store, read once something reads them; a change that leaves them equal
    /// delivers nothing.
    ///
    /// - Parameters:
    ///   - query: The query.
    ///   - store: The store, or `nil` to give it later (``store``).
    public convenience init(_ query: ModelQuery<Model>, in store: SyncStore? = nil) {
        self.init(query, in: store, removingDuplicates: { $0 == $1 })
    }
}
