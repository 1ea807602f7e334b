import Foundation

/// Where the package gets the time and waits: the system's clock in an app, a `VirtualCloudClock` in tests.
///
/// One clock type for every part that needs time: the in-memory and SQLite databases stamp saved records with
/// ``now()``, and the sync store and engine take edit times from it and wait on it (backoff, debouncing, polling).
/// Give a test's server and devices the same `VirtualCloudClock` (from `NestedCloudKitServer`) and nothing in it
/// sleeps for real.
///
/// Not the standard library's `Clock`: CloudKit's times are wall-clock dates (modification dates, edit times in
/// milliseconds since 1970), which a `Clock`'s instants are not.
public protocol CloudClock: Sendable {
    /// The current time.
    func now() -> Date
    /// Waits for a duration, or throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The system's clock: `Date()` and `Task.sleep`.
public struct SystemCloudClock: CloudClock {
    /// Creates the system's clock.
    public init() {}

    /// The system's current time.
    public func now() -> Date { Date() }

    /// Waits with `Task.sleep`.
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
