import Foundation

/// Callbacks to run after each local change.
///
/// `@unchecked Sendable` is sound: `observers` and `nextToken` are only touched while `lock` is held, and the
/// callbacks are `@Sendable`.
final class ObserverList: @unchecked Sendable {
    struct Token: Hashable, Sendable { let value: Int }

    private var observers: [Int: @Sendable () -> Void] = [:]
    private var nextToken = 0
    private let lock = NSLock()

    func add(_ body: @escaping @Sendable () -> Void) -> Token {
        lock.withLock {
            nextToken += 1
            observers[nextToken] = body
            return Token(value: nextToken)
        }
    }

    func remove(_ token: Token) {
        lock.withLock { _ = observers.removeValue(forKey: token.value) }
    }

    func notify() {
        let bodies = lock.withLock { Array(observers.values) }
        for body in bodies { body() }
    }
}
