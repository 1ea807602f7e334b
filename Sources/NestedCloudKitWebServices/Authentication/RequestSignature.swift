import Crypto
import Foundation

/// The signature of a request made with a server-to-server key.
///
/// CloudKit checks the ECDSA P-256 / SHA-256 signature, DER-encoded and in base64, of `DATE:BODYHASH:SUBPATH`:
/// the ISO 8601 date in whole seconds, the base64 SHA-256 of the exact body bytes, and the URL's path without the
/// host. The three headers carry the key ID, the date and the signature.
struct RequestSignature: Sendable, Hashable {
    static let keyIDHeader = "X-Apple-CloudKit-Request-KeyID"
    static let dateHeader = "X-Apple-CloudKit-Request-ISO8601Date"
    static let signatureHeader = "X-Apple-CloudKit-Request-SignatureV1"

    /// The date as sent: ISO 8601 in UTC and whole seconds, such as `2016-01-25T22:15:43Z`.
    let date: String
    /// The base64 DER ECDSA signature.
    let signature: String
    /// The key's ID.
    let keyID: String

    /// Signs a request.
    init(key: ServerToServerKey, date: Date, body: Data, subpath: String) throws {
        self.date = Self.format(date)
        let message = Self.message(date: self.date, bodyHash: Self.bodyHash(body), subpath: subpath)
        signature = try key.privateKey.signature(for: Data(message.utf8)).derRepresentation.base64EncodedString()
        keyID = key.keyID
    }

    /// The headers that carry the signature.
    var headers: [(name: String, value: String)] {
        [(Self.keyIDHeader, keyID), (Self.dateHeader, date), (Self.signatureHeader, signature)]
    }

    /// The base64 SHA-256 of the body.
    static func bodyHash(_ body: Data) -> String {
        Data(SHA256.hash(data: body)).base64EncodedString()
    }

    /// The signed string.
    static func message(date: String, bodyHash: String, subpath: String) -> String {
        "\(date):\(bodyHash):\(subpath)"
    }

    /// ISO 8601 in UTC, whole seconds.
    static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false, timeZone: .gmt))
    }
}
