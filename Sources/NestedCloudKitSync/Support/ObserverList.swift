import Foundation
import NestedCloudKitCodable

/// Callbacks to run after each local change.
final class ObserverList: Sendable {
    struct Token: Hashable, Sendable { let value: Int }

    private struct State {
        var observers: [Int: @Sendable () -> Void] = [:]
        var nextToken = 0
    }

    private let state = Locked(State())

    func add(_ body: @escaping @Sendable () -> Void) -> Token {
        state.withLock { state in
            state.nextToken += 1
            state.observers[state.nextToken] = body
            return Token(value: state.nextToken)
        }
    }

    func remove(_ token: Token) {
        state.withLock { _ = $0.observers.removeValue(forKey: token.value) }
    }

    func notify() {
        // Called outside the lock: a callback may add or remove observers.
        let bodies = state.withLock { Array($0.observers.values) }
        for body in bodies { body() }
    }
}
