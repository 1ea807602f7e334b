import Foundation
import NestedCloudKitCodable

/// Hands out edit times in milliseconds that never go backwards, even when the wall clock does, so that the later
/// of two edits on one device always has the larger time.
///
/// `@unchecked Sendable` is sound: `latest` is only read and written while `lock` is held.
final class EditClock: @unchecked Sendable {
    private let clock: any CloudClock
    private var latest: Int64
    private let lock = NSLock()

    init(clock: any CloudClock, latest: Int64) {
        self.clock = clock
        self.latest = latest
    }

    func next() -> Int64 {
        let now = EditTimes.milliseconds(clock.now())
        return lock.withLock {
            // Saturating: an absurd edit time fetched from another client (up to Int64.max) must not trap.
            latest = max(now, latest == Int64.max ? latest : latest + 1)
            return latest
        }
    }
}
