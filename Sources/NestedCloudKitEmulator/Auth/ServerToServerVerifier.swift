import Crypto
import Foundation

/// Checks server-to-server signatures as CloudKit documents them: the key ID names a registered public key, the
/// date is recent, and the ECDSA P-256 SHA-256 signature covers `DATE:BODYHASH:SUBPATH`.
struct ServerToServerVerifier: Sendable {
    /// The registered public keys by key ID.
    var keys: [String: P256.Signing.PublicKey]
    /// How far the request's date may be from the system's time. Apple documents no window; ten minutes takes the
    /// drift of real machines while still refusing a replay from yesterday.
    var allowedSkew: TimeInterval = 600

    static let keyIDHeader = "X-Apple-CloudKit-Request-KeyID"
    static let dateHeader = "X-Apple-CloudKit-Request-ISO8601Date"
    static let signatureHeader = "X-Apple-CloudKit-Request-SignatureV1"

    /// Whether the request carries a signature at all, rather than an API token.
    static func isSigned(_ request: EmulatorRequest) -> Bool {
        request.header(keyIDHeader) != nil || request.header(signatureHeader) != nil
    }

    /// The key ID that signed the request.
    ///
    /// The documentation signs the subpath; CloudKit JS and other clients sign the path with its query. Both are
    /// taken, the documented form first, and an empty body's hash either way (``bodyHashes(_:)``, FIDELITY.md).
    func verify(_ request: EmulatorRequest, now: Date = Date()) throws(ServerError) -> String {
        guard let keyID = request.header(Self.keyIDHeader), let dateText = request.header(Self.dateHeader),
            let signatureText = request.header(Self.signatureHeader)
        else {
            throw failed(
                "a signed request needs the \(Self.keyIDHeader), \(Self.dateHeader) and \(Self.signatureHeader) headers"
            )
        }
        guard let key = keys[keyID] else {
            throw failed(
                "no server-to-server key \(keyID) is registered: start the emulator with --server-key \(keyID)=PUBLIC_KEY.pem"
            )
        }
        guard let date = Self.date(dateText) else {
            throw failed(
                "\(Self.dateHeader) must be ISO 8601 in whole seconds, like 2016-01-25T22:15:43Z; got \(dateText)")
        }
        guard abs(date.timeIntervalSince(now)) <= allowedSkew else {
            throw failed(
                "the request's date \(dateText) is more than \(Int(allowedSkew / 60)) minutes from the server's time")
        }
        guard let signatureBytes = Data(base64Encoded: signatureText),
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: signatureBytes)
        else { throw failed("the signature isn't a base64 DER ECDSA signature") }
        for bodyHash in Self.bodyHashes(request.body) {
            for subpath in [request.rawPath, request.rawTarget] {
                if key.isValidSignature(signature, for: Data("\(dateText):\(bodyHash):\(subpath)".utf8)) {
                    return keyID
                }
            }
        }
        throw failed(
            "the signature doesn't verify with key \(keyID): sign DATE:BODYHASH:SUBPATH with the key's private half, "
                + "where BODYHASH is the base64 SHA-256 of the exact body and SUBPATH the path (\(request.rawPath))")
    }

    /// The body hashes a signature may cover: the base64 SHA-256 of the body; for a request without a body (a GET
    /// such as `zones/list`), also an empty field (`DATE::SUBPATH`). Apple's reference doesn't say which an empty body
    /// takes, and clients differ: CloudKit JS-style clients and requests-cloudkit hash the empty body, MistKit signs
    /// an empty field, and both work against CloudKit (FIDELITY.md).
    static func bodyHashes(_ body: Data) -> [String] {
        let hash = Data(SHA256.hash(data: body)).base64EncodedString()
        return body.isEmpty ? [hash, ""] : [hash]
    }

    private func failed(_ reason: String) -> ServerError {
        ServerError(.authenticationFailed, reason)
    }

    /// The request's date, with or without fractional seconds. Foundation's format styles, not
    /// `ISO8601DateFormatter`: making that formatter was an eighth of the emulator's time under load.
    static func date(_ text: String) -> Date? {
        (try? Date(text, strategy: Self.wholeSeconds)) ?? (try? Date(text, strategy: Self.fractionalSeconds))
    }

    private static let wholeSeconds = Date.ISO8601FormatStyle()
    private static let fractionalSeconds = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// A public key from PEM text (`openssl ec -pubout`), for `--server-key`.
    static func publicKey(pem: String) throws -> P256.Signing.PublicKey {
        try P256.Signing.PublicKey(pemRepresentation: pem)
    }
}
