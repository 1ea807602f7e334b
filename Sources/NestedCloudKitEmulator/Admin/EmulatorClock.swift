import Foundation
import NIOConcurrencyHelpers

/// The emulator's time: the system's, moved by an offset a test sets, so that it can expire upload URLs, web auth
/// tokens and change tokens without waiting.
final class EmulatorClock: Sendable {
    private let offset = NIOLockedValueBox<TimeInterval>(0)
    private let base: @Sendable () -> Date

    init(base: @escaping @Sendable () -> Date = { Date() }) {
        self.base = base
    }

    func now() -> Date { base().addingTimeInterval(offset.withLockedValue { $0 }) }

    var offsetSeconds: TimeInterval { offset.withLockedValue { $0 } }

    func setOffset(_ seconds: TimeInterval) { offset.withLockedValue { $0 = seconds } }

    func advance(by seconds: TimeInterval) { offset.withLockedValue { $0 += seconds } }
}
