import Foundation
import NestedCloudKitCodable
import Observation

/// The result of one of the store's reads, kept current for the observable objects a view holds
/// (``ObservedQuery``, ``ObservedModel``, ``ObservedCount``), which each wrap one.
///
/// A SwiftUI view makes its observable objects in its initializer (`@State private var notes = ObservedQuery(…)`),
/// and SwiftUI evaluates that initializer again each time a parent rebuilds the view, keeping only the first
/// object. So nothing is read when one is made: the first read of its result starts the observation, and an object
/// made and thrown away costs nothing. A store given later (from the view's environment) or a new read observes
/// again, keeping the previous result until the new one arrives; the observation ends with the object.
@MainActor
@Observable
final class StoreResult<Value> {
    /// The result at the last change.
    var value: Value {
        startIfWanted()
        return current
    }

    /// Whether a result arrived.
    var isLoaded: Bool {
        startIfWanted()
        return loaded
    }

    /// Why the last read failed; `nil` while reads succeed.
    var error: (any Error)? {
        startIfWanted()
        return failure
    }

    /// The store read; `nil` until the view has one. Another one is observed at once if the result was read.
    @ObservationIgnored var store: SyncStore? {
        didSet { if store !== oldValue { restart() } }
    }

    private var current: Value
    private var loaded = false
    private var failure: (any Error)?
    /// The read, as an observation of a store.
    @ObservationIgnored private var read: (SyncStore) -> StoreObservation<Value>
    /// Whether something read the result, so that an observation runs once it can.
    @ObservationIgnored private var isWanted = false
    /// How many observations it started, for the tests: one per store and read, however often it is made.
    @ObservationIgnored private(set) var observationsStarted = 0
    /// The observation's task, behind a lock so that `deinit` (not on the main actor) can cancel it.
    @ObservationIgnored private let task = Locked<Task<Void, Never>?>(nil)

    init(_ initial: Value, store: SyncStore?, read: @escaping (SyncStore) -> StoreObservation<Value>) {
        current = initial
        self.store = store
        self.read = read
    }

    deinit {
        task.withLock { $0?.cancel() }
    }

    /// Reads something else from now on: observed at once if the result was read.
    func change(_ read: @escaping (SyncStore) -> StoreObservation<Value>) {
        self.read = read
        restart()
    }

    private func startIfWanted() {
        guard !isWanted else { return }
        isWanted = true
        restart()
    }

    private func restart() {
        guard isWanted, let store else {
            task.withLock { $0?.cancel() }
            return
        }
        let observation = read(store)
        observationsStarted += 1
        let next = Task { @MainActor [weak self] in
            do {
                for try await value in observation {
                    guard let self else { return }
                    current = value
                    loaded = true
                    failure = nil
                }
            } catch {
                self?.failure = error
            }
        }
        task.withLock { running in
            running?.cancel()
            running = next
        }
    }
}
