import Foundation
import NestedCloudKitCodable

/// A clock for tests: time moves only when something waits on it or the test advances it, and every wait is
/// recorded. Beside the simulated server, which tests and examples run against: an app's own code takes the
/// system's clock, the default everywhere a clock is taken.
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
