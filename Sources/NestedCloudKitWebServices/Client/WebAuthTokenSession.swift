import Foundation

/// A user's web auth token, and the turn to use it.
///
/// CloudKit answers every request made with a web auth token with a new one, and the old one stops working. So
/// requests take turns, in the order they asked: each waits until the one before has its response and the token
/// that came with it. A request whose task is cancelled while it waits leaves the line at once.
actor WebAuthTokenSession {
    private(set) var token: String
    private var isInUse = false
    /// The requests waiting for their turn, first come first served; the number lets a cancelled one leave.
    private var waiting: [(number: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var nextNumber: UInt64 = 0
    private let rotated: @Sendable (String) -> Void

    init(token: String, rotated: @escaping @Sendable (String) -> Void) {
        self.token = token
        self.rotated = rotated
    }

    /// The number of requests waiting for their turn.
    var waitingCount: Int { waiting.count }

    /// Waits for this request's turn and returns the token to send.
    ///
    /// - Throws: `CancellationError` when the task is cancelled before its turn comes; it then holds no turn.
    func begin() async throws -> String {
        guard isInUse else {
            isInUse = true
            return token
        }
        let number = nextNumber
        nextNumber += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Runs on the actor before it can do anything else, so a cancellation that came first is seen here
                // and one that comes later finds the continuation in line.
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiting.append((number, continuation))
                }
            }
        } onCancel: {
            Task { await self.leave(number) }
        }
        return token
    }

    /// Takes a cancelled request out of the line; one whose turn has already come keeps it, and ends it as usual.
    private func leave(_ number: UInt64) {
        guard let index = waiting.firstIndex(where: { $0.number == number }) else { return }
        waiting.remove(at: index).continuation.resume(throwing: CancellationError())
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
            waiting.removeFirst().continuation.resume()
        }
    }
}
