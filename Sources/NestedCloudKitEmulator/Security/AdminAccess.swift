import Crypto
import Foundation

/// Who may call the admin API: the emulator's own pages or a program (no `Origin`), never a page of another web
/// origin; and, when the emulator has an admin token, only a caller that sends it.
///
/// A browser tells where a request comes from: `Origin` on every cross-origin request and every POST, and
/// `Sec-Fetch-Site` on all of them in current browsers. Programs (curl, tests, scripts) send neither.
struct AdminAccess: Sendable {
    let origins: RequestOrigins
    let adminToken: String?

    func check(_ request: EmulatorRequest) throws(ServerError) {
        let site = request.header("sec-fetch-site")?.lowercased()
        if let origin = request.header("origin"), !origins.isEmulator(origin) {
            throw refusal("a page of \(origin)")
        }
        if site == "cross-site" || site == "same-site" {
            throw refusal("a page of another origin (Sec-Fetch-Site: \(site ?? ""))")
        }
        guard let adminToken else { return }
        let sent = request.header("authorization").flatMap { value -> String? in
            let parts = value.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
            return String(parts[1]).trimmingCharacters(in: .whitespaces)
        }
        guard let sent, Self.constantTimeEqual(sent, adminToken) else {
            throw ServerError(
                .authenticationFailed,
                "the admin API needs the emulator's admin token: send Authorization: Bearer TOKEN (the dashboard: open \(request.baseURL)/#admin-token=TOKEN)"
            )
        }
    }

    private func refusal(_ source: String) -> ServerError {
        ServerError(
            .accessDenied,
            "the admin API answers only the emulator's own pages (\(origins.emulatorOrigin)) and programs, not \(source): open the dashboard at \(origins.emulatorOrigin)/ to control the emulator from a browser"
        )
    }

    /// Compares digests, so that the time taken says nothing about how much of a guess was right.
    private static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let key = SymmetricKey(size: .bits256)
        let macA = HMAC<SHA256>.authenticationCode(for: Data(a.utf8), using: key)
        return HMAC<SHA256>.isValidAuthenticationCode(macA, authenticating: Data(b.utf8), using: key)
    }
}
