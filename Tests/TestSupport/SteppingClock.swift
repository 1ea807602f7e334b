import Foundation
import NestedCloudKitCodable

/// A clock that moves on one second each time it is read, so every save gets its own modification date and a test
/// can name the moment between two saves without sleeping.
package final class SteppingClock: CloudClock {
    package init() {}

    private let current = Locked(Date(timeIntervalSince1970: 1_800_000_000))

    package func now() -> Date {
        current.withLock { date in
            date += 1
            return date
        }
    }

    package func sleep(for duration: Duration) async throws {}
}
