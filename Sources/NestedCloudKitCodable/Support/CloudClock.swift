import Foundation

/// Where the package gets the time and waits: the system's clock in an app, a ``VirtualCloudClock`` in tests.
///
/// One clock type for every part that needs time: the in-memory and SQLite databases stamp saved records with
/// ``now()``, and the sync store and engine take edit times from it and wait on it (backoff, debouncing, polling).
/// Give a test's server and devices the same ``VirtualCloudClock`` and nothing in it sleeps for real.
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

/// A clock for tests: time moves only when something waits on it or the test advances it, and every wait is
/// recorded.
///
/// A wait returns at once, after moving the time forward by its duration, so a test of retries, backoff, polling
/// or latency runs in microseconds and asserts the exact waits (``waits``).
public final class VirtualCloudClock: CloudClock, Sendable {
    private struct State {
        var current: Date
        var recorded: [Duration] = []
    }

    private let state: Locked<State>

    /// Creates a clock that starts at a time.
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Locked(State(current: start))
    }

    /// The clock's current time.
    public func now() -> Date { state.withLock { $0.current } }

    /// Moves the time forward by the duration and returns at once, recording the wait.
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        advance(by: duration)
        state.withLock { $0.recorded.append(duration) }
        await Task.yield()
    }

    /// Moves the time forward, as if the device had been idle.
    public func advance(by duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        state.withLock { $0.current += seconds }
    }

    /// Every wait so far, in order.
    public var waits: [Duration] { state.withLock { $0.recorded } }
}
