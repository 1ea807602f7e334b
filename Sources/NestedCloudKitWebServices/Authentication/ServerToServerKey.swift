import Crypto
import Foundation

/// A server-to-server key: the ID CloudKit Console shows for it and its ECDSA P-256 private key.
///
/// Make one with OpenSSL, then register its public half in CloudKit Console (the container's Tokens & Keys,
/// "Server-to-Server Keys") and note the key ID it gives:
///
/// ```sh
/// openssl ecparam -name prime256v1 -genkey -noout -out eckey.pem
/// openssl ec -in eckey.pem -pubout
/// ```
///
/// The private key never leaves this value: its description, debug description and mirror show the key ID only.
public struct ServerToServerKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Why a key couldn't be loaded.
    public enum LoadingError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The file couldn't be read.
        case unreadableFile(path: String, reason: String)
        /// The text holds no PEM private key (`-----BEGIN EC PRIVATE KEY-----` or `-----BEGIN PRIVATE KEY-----`).
        case noPrivateKey
        /// The PEM block isn't an ECDSA P-256 private key.
        case notP256Key
        /// The key ID is empty.
        case emptyKeyID

        /// What went wrong and how to fix it; never the key itself.
        public var description: String {
            switch self {
            case .unreadableFile(let path, let reason): "Can't read the key file \(path): \(reason)"
            case .noPrivateKey:
                "The text holds no PEM private key: give the file `openssl ecparam -name prime256v1 -genkey -noout` wrote"
            case .notP256Key: "The PEM block isn't an ECDSA P-256 (prime256v1) private key, the kind CloudKit accepts"
            case .emptyKeyID: "The key ID is empty: copy it from CloudKit Console's Server-to-Server Keys"
            }
        }
    }

    /// The key's ID in CloudKit Console, sent with each request.
    public let keyID: String

    let privateKey: P256.Signing.PrivateKey

    /// Loads a key from its PEM text (SEC1 `EC PRIVATE KEY` or PKCS #8 `PRIVATE KEY`; an `EC PARAMETERS` block
    /// before it is skipped).
    public init(keyID: String, pemRepresentation: String) throws(LoadingError) {
        guard !keyID.isEmpty else { throw .emptyKeyID }
        guard let block = Self.privateKeyBlock(in: pemRepresentation) else { throw .noPrivateKey }
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: block)
        } catch {
            throw .notP256Key
        }
        self.keyID = keyID
    }

    /// Loads a key from a PEM file.
    public init(keyID: String, pemFile: URL) throws(LoadingError) {
        let text: String
        do {
            text = try String(contentsOf: pemFile, encoding: .utf8)
        } catch {
            throw .unreadableFile(path: pemFile.path, reason: (error as NSError).localizedDescription)
        }
        try self.init(keyID: keyID, pemRepresentation: text)
    }

    /// The public half in PEM, the text CloudKit Console asks for when the key is registered.
    public var publicKeyPEMRepresentation: String {
        privateKey.publicKey.pemRepresentation
    }

    /// The key ID only.
    public var description: String { "ServerToServerKey(keyID: \(keyID))" }

    /// The key ID only.
    public var debugDescription: String { description }

    /// A mirror with the key ID only, so that `dump` doesn't show the key.
    public var customMirror: Mirror { Mirror(self, children: ["keyID": keyID]) }

    /// The private key's PEM block: the text from its BEGIN line through its END line.
    private static func privateKeyBlock(in text: String) -> String? {
        for label in ["EC PRIVATE KEY", "PRIVATE KEY"] {
            guard let begin = text.range(of: "-----BEGIN \(label)-----"),
                let end = text.range(of: "-----END \(label)-----", range: begin.upperBound..<text.endIndex)
            else { continue }
            return String(text[begin.lowerBound..<end.upperBound])
        }
        return nil
    }
}
