import Crypto
import Foundation

/// The users' web auth tokens. Each answer carries a new one; whether the used one goes on working is the
/// ``WebAuthTokenPolicy``. A token unused for 30 minutes (the emulator's clock) expires, as CloudKit's do unless the
/// user asked to stay signed in.
actor WebAuthTokens {
    /// One sign-in: its user and the tokens handed out since, each with when it was issued or last used.
    private struct Session {
        var user: String
        var tokens: [String: Use] = [:]
    }

    /// When a token was issued or last used, and a count that orders uses the clock can't (it may stand still).
    private struct Use {
        var date: Date
        var order: Int
    }

    static let lifetime: TimeInterval = 30 * 60
    /// The most tokens a session keeps under ``WebAuthTokenPolicy/reusable``: those used or issued last, so that
    /// a client that keeps one token, or shares one between concurrent requests, keeps it working, while the
    /// emulator doesn't keep every token of a long session.
    static let tokensPerSession = 16
    private var sessions: [Int: Session] = [:]
    private var sessionOfToken: [String: Int] = [:]
    private var nextSession = 0
    private var uses = 0
    private let clock: EmulatorClock
    private let policy: WebAuthTokenPolicy

    init(clock: EmulatorClock, policy: WebAuthTokenPolicy = .reusable) {
        self.clock = clock
        self.policy = policy
    }

    /// A new token for `user`: a new sign-in.
    func issue(for user: String) -> String {
        nextSession += 1
        sessions[nextSession] = Session(user: user)
        return issue(in: nextSession)
    }

    /// The user `token` belongs to, and the token the answer hands on. Under ``WebAuthTokenPolicy/singleUse`` the
    /// token itself stops working; otherwise it is good for another 30 minutes.
    func redeem(_ token: String) -> (user: String, next: String)? {
        let now = clock.now()
        guard let id = sessionOfToken[token], let session = sessions[id], let used = session.tokens[token] else {
            return nil
        }
        guard now.timeIntervalSince(used.date) <= Self.lifetime else {
            forget(token, in: id)
            return nil
        }
        switch policy {
        case .singleUse: forget(token, in: id)
        case .reusable: sessions[id]?.tokens[token] = nextUse(now)
        }
        return (session.user, issue(in: id))
    }

    func reset() {
        sessions = [:]
        sessionOfToken = [:]
    }

    /// Ends every session of `user`.
    func revoke(user: String) {
        for (id, session) in sessions where session.user == user {
            for token in session.tokens.keys { sessionOfToken[token] = nil }
            sessions[id] = nil
        }
    }

    private func issue(in id: Int) -> String {
        let token = Self.newToken()
        sessions[id]?.tokens[token] = nextUse(clock.now())
        sessionOfToken[token] = id
        while let tokens = sessions[id]?.tokens, tokens.count > Self.tokensPerSession,
            let oldest = tokens.min(by: { $0.value.order < $1.value.order })?.key
        {
            forget(oldest, in: id)
        }
        return token
    }

    private func nextUse(_ date: Date) -> Use {
        uses += 1
        return Use(date: date, order: uses)
    }

    private func forget(_ token: String, in id: Int) {
        sessions[id]?.tokens[token] = nil
        sessionOfToken[token] = nil
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
