import Foundation

/// A value behind a lock: the one lock of the package, for the state its types share across tasks outside an actor
/// (caches, clocks, observer lists), in every module and in the tests.
///
/// Not the standard library's `Mutex`, which says the same to the compiler without `@unchecked`: it needs macOS 15
/// and iOS 18, and the package supports earlier releases. Not `NSLock` in each type either: one place holds the
/// `@unchecked Sendable` promise.
///
/// `@unchecked Sendable` is sound: `value` is only read or written inside ``withLock(_:)``, which holds `lock`.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    /// Puts a value behind the lock.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock; what `body` changes stays.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
