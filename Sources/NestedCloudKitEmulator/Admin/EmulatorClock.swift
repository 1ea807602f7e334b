import Foundation
import NIOConcurrencyHelpers
import NestedCloudKitCodable

/// The emulator's time: the system's, moved by an offset a test sets, so that it can expire upload URLs, web auth
/// tokens and change tokens without waiting.
final class EmulatorClock: CloudClock {
    private let offset = NIOLockedValueBox<TimeInterval>(0)
    private let base: any CloudClock

    init(base: any CloudClock = SystemCloudClock()) {
        self.base = base
    }

    func now() -> Date { base.now().addingTimeInterval(offset.withLockedValue { $0 }) }

    func sleep(for duration: Duration) async throws { try await base.sleep(for: duration) }

    var offsetSeconds: TimeInterval { offset.withLockedValue { $0 } }

    func setOffset(_ seconds: TimeInterval) { offset.withLockedValue { $0 = seconds } }

    func advance(by seconds: TimeInterval) { offset.withLockedValue { $0 += seconds } }
}
