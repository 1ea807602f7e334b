import Foundation

/// A value behind a lock, for the few bits of state the store and the engine share across tasks outside an actor.
///
/// `@unchecked Sendable` is sound: `value` is only touched while `lock` is held. (The standard library's `Mutex`
/// needs macOS 15 and iOS 18; this module supports earlier releases.)
final class Locked<Value: Sendable>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
