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
    /// Why a key couldn't be loaded; never the key itself.
    ///
    /// Match an error by its ``code`` (a later release may add codes, so a `switch` over it needs a `default`), or
    /// compare it with a value. For a file that can't be read, ``path`` names it and ``underlyingError`` holds the
    /// file system's error.
    public struct LoadingError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What kind of failure an error is.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            /// The code's name.
            public let description: String

            private init(_ name: String) { description = name }

            /// See ``LoadingError/unreadableFile(path:reason:)``.
            public static let unreadableFile = Code("unreadableFile")
            /// See ``LoadingError/noPrivateKey``.
            public static let noPrivateKey = Code("noPrivateKey")
            /// See ``LoadingError/notP256Key``.
            public static let notP256Key = Code("notP256Key")
            /// See ``LoadingError/emptyKeyID``.
            public static let emptyKeyID = Code("emptyKeyID")
        }

        /// What the error is. Private, so that a new kind breaks no app's `switch`.
        private enum Kind: Sendable, Hashable {
            case unreadableFile(path: String, reason: String)
            case noPrivateKey, notP256Key, emptyKeyID
        }

        private let kind: Kind
        /// The file system's error, for ``Code/unreadableFile``. Two errors that differ only in it are equal.
        public let underlyingError: (any Error)?

        private init(_ kind: Kind, underlying: (any Error)? = nil) {
            self.kind = kind
            underlyingError = underlying
        }

        /// The file couldn't be read.
        public static func unreadableFile(path: String, reason: String) -> LoadingError {
            LoadingError(.unreadableFile(path: path, reason: reason))
        }

        /// The file couldn't be read because of `underlying`, which the error carries.
        static func unreadableFile(path: String, underlying: any Error) -> LoadingError {
            LoadingError(
                .unreadableFile(path: path, reason: (underlying as NSError).localizedDescription),
                underlying: underlying)
        }

        /// The text holds no PEM private key (`-----BEGIN EC PRIVATE KEY-----` or `-----BEGIN PRIVATE KEY-----`).
        public static let noPrivateKey = LoadingError(.noPrivateKey)
        /// The PEM block isn't an ECDSA P-256 private key.
        public static let notP256Key = LoadingError(.notP256Key)
        /// The key ID is empty.
        public static let emptyKeyID = LoadingError(.emptyKeyID)

        /// What kind of failure this is.
        public var code: Code {
            switch kind {
            case .unreadableFile: .unreadableFile
            case .noPrivateKey: .noPrivateKey
            case .notP256Key: .notP256Key
            case .emptyKeyID: .emptyKeyID
            }
        }

        /// The key file that couldn't be read, for ``Code/unreadableFile``.
        public var path: String? {
            if case .unreadableFile(let path, _) = kind { return path }
            return nil
        }

        /// What went wrong and how to fix it; never the key itself.
        public var description: String {
            switch kind {
            case .unreadableFile(let path, let reason): "Can't read the key file \(path): \(reason)"
            case .noPrivateKey:
                "The text holds no PEM private key: give the file `openssl ecparam -name prime256v1 -genkey -noout` wrote"
            case .notP256Key: "The PEM block isn't an ECDSA P-256 (prime256v1) private key, the kind CloudKit accepts"
            case .emptyKeyID: "The key ID is empty: copy it from CloudKit Console's Server-to-Server Keys"
            }
        }

        /// Whether two errors are the same failure; their ``underlyingError``s aren't compared.
        public static func == (lhs: LoadingError, rhs: LoadingError) -> Bool { lhs.kind == rhs.kind }

        /// Hashes what `==` compares.
        public func hash(into hasher: inout Hasher) { hasher.combine(kind) }
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
            throw .unreadableFile(path: pemFile.path, underlying: error)
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
