import Crypto
import Foundation

/// The tokens of asset download URLs: the asset's location (database, and so its user; record; field) and an
/// expiry, signed with a key made when the emulator starts.
///
/// A download URL carries no other credential (CloudKit's are used in `<img src>`), so it must be unguessable and
/// unforgeable: without the key nobody can name another record, another user's database, or a later expiry. The
/// key is random and kept in memory only: a restart ends every URL handed out, as an expiry does, and a client
/// fetches the record again.
struct DownloadTokens: Sendable {
    /// What a token holds.
    struct Claims: Codable, Sendable {
        var location: AssetsEndpoint.Location
        /// When the URL stops working, in milliseconds since 1970 of the emulator's clock.
        var expires: Int64
    }

    /// How long a URL works at least. CloudKit documents no lifetime for its download URLs; an hour covers a
    /// client that fetches a record and then its assets.
    static let minimumLifetime: TimeInterval = 3600

    private let key: SymmetricKey
    private let clock: EmulatorClock

    init(clock: EmulatorClock, key: SymmetricKey = SymmetricKey(size: .bits256)) {
        self.clock = clock
        self.key = key
    }

    /// A token for the asset at `location`. It works until the end of the hour after the current one (between one
    /// and two hours), so that the same asset keeps the same URL for an hour: a page showing it isn't redrawn.
    func token(for location: AssetsEndpoint.Location) -> String {
        let hour = (clock.now().timeIntervalSince1970 / Self.minimumLifetime).rounded(.down)
        let expires = Int64((hour + 2) * Self.minimumLifetime * 1000)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding strings and integers can't fail; an empty payload would only fail to verify.
        let payload = (try? encoder.encode(Claims(location: location, expires: expires))) ?? Data()
        let signature = Data(HMAC<SHA256>.authenticationCode(for: payload, using: key))
        return Self.base64URL(payload) + "." + Self.base64URL(signature)
    }

    /// The location a token names, if the emulator signed it and it hasn't expired; `nil` otherwise, whichever
    /// part failed.
    func location(from token: String) -> AssetsEndpoint.Location? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = Self.data(base64URL: parts[0]),
            let signature = Self.data(base64URL: parts[1]),
            HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: payload, using: key),
            let claims = try? JSONDecoder().decode(Claims.self, from: payload),
            Int64((clock.now().timeIntervalSince1970 * 1000).rounded(.down)) < claims.expires
        else { return nil }
        return claims.location
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func data(base64URL text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
