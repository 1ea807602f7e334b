import Crypto
import Foundation

/// The users' web auth tokens. Each answers one request: the answer carries the next, and the used one stops
/// working, as CloudKit does it. A token unused for 30 minutes (the emulator's clock) expires, as CloudKit's do
/// unless the user asked to stay signed in.
actor WebAuthTokens {
    private struct Session {
        var user: String
        var issued: Date
    }

    static let lifetime: TimeInterval = 30 * 60
    private var sessions: [String: Session] = [:]
    private let clock: EmulatorClock

    init(clock: EmulatorClock) {
        self.clock = clock
    }

    /// A new token for `user`.
    func issue(for user: String) -> String {
        let token = Self.newToken()
        sessions[token] = Session(user: user, issued: clock.now())
        return token
    }

    /// The user `token` belongs to, and the token that replaces it; the token itself stops working.
    func redeem(_ token: String) -> (user: String, next: String)? {
        guard let session = sessions.removeValue(forKey: token) else { return nil }
        guard clock.now().timeIntervalSince(session.issued) <= Self.lifetime else { return nil }
        return (session.user, issue(for: session.user))
    }

    func reset() { sessions = [:] }

    /// Ends every session of `user`.
    func revoke(user: String) {
        sessions = sessions.filter { $0.value.user != user }
    }

    /// Random and opaque, in the shape of CloudKit's (digits and underscores, then base64url).
    private static func newToken() -> String {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let text = bytes.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return "emu__" + text
    }
}
