import Foundation
import NestedCloudKitCodable
import Observation

/// A query's models that a view holds and that follow the store: what SwiftUI's `@Query` and SQLiteData's
/// `@FetchAll` give a view.
///
/// ```swift
/// struct OpenNotes: View {
///     @State private var notes = ObservedQuery(
///         ModelQuery(Note.self).filter(.equals(.isDone, false)).sorted(by: .descending(.creationDate)), in: store)
///
///     var body: some View {
///         List(notes.models) { note in Text(note.title) }
///     }
/// }
/// ```
///
/// It reads the store when made and after every transaction that changes the result (``SyncStore/observe(_:)``),
/// on the main actor, so a view redraws with each new result. Changing ``query`` reads again with the new one.
/// It stops observing when released.
@MainActor
@Observable
public final class ObservedQuery<Model: QueryableModel> {
    /// The models the query matched at the last change.
    public private(set) var models: [Model] = []
    /// Whether the first result arrived.
    public private(set) var isLoaded = false
    /// Why the last read failed (``SyncError/invalidQuery(_:)``, a closed store); `nil` while reads succeed.
    public private(set) var error: (any Error)?
    /// The query; setting it observes the new one.
    public var query: ModelQuery<Model> {
        didSet { observe() }
    }

    @ObservationIgnored private let store: SyncStore
    @ObservationIgnored private let task = Locked<Task<Void, Never>?>(nil)

    /// Observes a query of a store.
    public init(_ query: ModelQuery<Model>, in store: SyncStore) {
        self.query = query
        self.store = store
        observe()
    }

    deinit {
        task.withLock { $0?.cancel() }
    }

    private func observe() {
        let observation = store.observe(query)
        let next = Task { @MainActor [weak self] in
            do {
                for try await models in observation {
                    guard let self else { return }
                    self.models = models
                    self.isLoaded = true
                    self.error = nil
                }
            } catch {
                self?.error = error
            }
        }
        task.withLock { current in
            current?.cancel()
            current = next
        }
    }
}
