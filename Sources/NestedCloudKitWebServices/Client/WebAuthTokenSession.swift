import Foundation

/// A user's web auth token, and the turn to use it.
///
/// CloudKit answers every request made with a web auth token with a new one, and the old one stops working. So
/// requests take turns, in the order they asked: each waits until the one before has its response and the token
/// that came with it.
actor WebAuthTokenSession {
    private(set) var token: String
    private var isInUse = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private let rotated: @Sendable (String) -> Void

    init(token: String, rotated: @escaping @Sendable (String) -> Void) {
        self.token = token
        self.rotated = rotated
    }

    /// Waits for this request's turn and returns the token to send.
    func begin() async -> String {
        if isInUse {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            isInUse = true
        }
        return token
    }

    /// Ends the turn, keeping the token the response brought, if any, and hands the turn to the next request.
    func end(rotatingTo newToken: String?) {
        if let newToken, newToken != token {
            token = newToken
            rotated(newToken)
        }
        if waiting.isEmpty {
            isInUse = false
        } else {
            // The turn passes straight to the next request, so `isInUse` stays true.
            waiting.removeFirst().resume()
        }
    }
}
