import Foundation
import NestedCloudKitCodable

/// Hands out edit times in milliseconds that never go backwards, even when the wall clock does, so that the later
/// of two edits on one device always has the larger time.
final class EditClock: Sendable {
    private let clock: any CloudClock
    private let latest: Locked<Int64>

    init(clock: any CloudClock, latest: Int64) {
        self.clock = clock
        self.latest = Locked(latest)
    }

    func next() -> Int64 {
        let now = EditTimes.milliseconds(clock.now())
        return latest.withLock { latest in
            // Saturating: an absurd edit time fetched from another client (up to Int64.max) must not trap.
            latest = max(now, latest == Int64.max ? latest : latest + 1)
            return latest
        }
    }
}
