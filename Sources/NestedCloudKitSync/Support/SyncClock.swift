import Foundation

/// Where the sync engine gets the time and waits: the system's clock in an app, a ``VirtualSyncClock`` in tests,
/// so that backoff, debouncing and polling run without real waits.
public protocol SyncClock: Sendable {
    /// The current time.
    func now() -> Date
    /// Waits for a duration, or throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The system's clock: `Date()` and `Task.sleep`.
public struct SystemSyncClock: SyncClock {
    /// Creates the system's clock.
    public init() {}

    /// The system's current time.
    public func now() -> Date { Date() }

    /// Waits with `Task.sleep`.
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

/// A clock for tests: time moves only when the engine waits or the test advances it, and every wait is recorded.
///
/// A wait returns at once, after moving the time forward by its duration, so a test of retries, backoff or
/// polling runs in microseconds and asserts the exact waits (``waits``).
///
/// `@unchecked Sendable` is sound: `current` and `recorded` are only touched while `lock` is held.
public final class VirtualSyncClock: SyncClock, @unchecked Sendable {
    private var current: Date
    private var recorded: [Duration] = []
    private let lock = NSLock()

    /// Creates a clock that starts at a time.
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = start
    }

    /// The clock's current time.
    public func now() -> Date { lock.withLock { current } }

    /// Moves the time forward by the duration and returns at once, recording the wait.
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        advance(by: duration)
        lock.withLock { recorded.append(duration) }
        await Task.yield()
    }

    /// Moves the time forward, as if the device had been idle.
    public func advance(by duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        lock.withLock { current += seconds }
    }

    /// Every wait the engine made, in order.
    public var waits: [Duration] { lock.withLock { recorded } }
}
