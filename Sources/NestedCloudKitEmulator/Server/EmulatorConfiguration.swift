import Crypto
import Foundation
import NestedCloudKitCodable

/// How an emulator is set up: where it listens, where it keeps its data, and who may call it.
public struct EmulatorConfiguration: Sendable {
    /// The address to listen on; loopback by default, since the emulator checks no TLS. Requests must name it (or a
    /// loopback name: `127.0.0.1`, `localhost`, `[::1]`) with the port in their `Host` header.
    public var host: String
    /// The port; 0 picks a free one.
    public var port: Int
    /// Where the databases are kept: SQLite files under a directory, or memory.
    public var storage: EmulatorStorage
    /// Server-to-server public keys by key ID.
    public var serverKeys: [String: P256.Signing.PublicKey]
    /// The API tokens accepted; empty accepts any, which suits a developer's machine.
    public var apiTokens: Set<String>
    /// The environment served: paths naming the other one are refused.
    public var environment: EmulatorEnvironment
    /// The schema each container starts with in the served environment: in production, what it keeps to (the
    /// schema `cktool export-schema` exported from production, or `CloudSchema.init(models:samples:queries:encoder:)`
    /// made from the app's models); in development, what saves add to. It wins over a schema a data directory kept
    /// from an earlier run; one imported while the emulator runs replaces it for that container.
    public var schema: CloudSchema?
    /// How long a poll of a notification URL waits before answering with an empty body.
    public var notificationPollTimeout: Duration
    /// The token every call of the admin API (`/emulator/v1/`) must carry, as `Authorization: Bearer TOKEN`; `nil`
    /// asks for none. The dashboard takes it from its URL's fragment: `http://127.0.0.1:8080/#admin-token=TOKEN`.
    ///
    /// Without a token, the admin API still answers no web page of another origin: a browser's request whose
    /// `Origin` isn't the emulator's own is refused. The token also keeps out the machine's other users and programs.
    public var adminToken: String?
    /// Web origins, besides loopback ones, that the sign-in page hands web auth tokens to (by `postMessage` or a
    /// redirect to `returnURL`), as the allowed origins of a CloudKit API token: `https://dev.example.com:8443`.
    /// Loopback origins (`http` or `https` on `localhost`, `127.0.0.1` or `[::1]`, any port) are always allowed.
    public var allowedOrigins: [String]
    /// Whether the request log keeps the admin API's reads too (`GET` under `/emulator/v1/`, such as the dashboard's
    /// polling). Off by default: the log is for what CloudKit clients and tests asked.
    public var logsAdminReads: Bool
    /// The time before the admin API's offset: the system's, unless a test injects its own.
    public var clock: any CloudClock
    /// Whether a used web auth token keeps working: by default as live CloudKit (``WebAuthTokenPolicy/reusable``),
    /// or single-use as Apple's reference says (``WebAuthTokenPolicy/singleUse``, `--single-use-web-auth-tokens`).
    public var webAuthTokens: WebAuthTokenPolicy
    /// The largest request body read: a 50 MB asset and its envelope. A larger body answers 413.
    var maximumRequestBodySize = 60 * 1024 * 1024

    /// A configuration: by default loopback on a free port, in memory, any API token, no admin token, web auth
    /// tokens as live CloudKit treats them, and the development environment, or production with a schema.
    public init(
        host: String = "127.0.0.1", port: Int = 0, storage: EmulatorStorage = .inMemory,
        serverKeys: [String: P256.Signing.PublicKey] = [:], apiTokens: Set<String> = [],
        environment: EmulatorEnvironment? = nil, schema: CloudSchema? = nil,
        notificationPollTimeout: Duration = .seconds(25),
        adminToken: String? = nil, allowedOrigins: [String] = [], logsAdminReads: Bool = false,
        clock: any CloudClock = SystemCloudClock(), webAuthTokens: WebAuthTokenPolicy = .reusable
    ) {
        self.clock = clock
        self.webAuthTokens = webAuthTokens
        self.host = host
        self.port = port
        self.storage = storage
        self.serverKeys = serverKeys
        self.apiTokens = apiTokens
        self.environment = environment ?? (schema == nil ? .development : .production)
        self.schema = schema
        self.notificationPollTimeout = notificationPollTimeout
        self.adminToken = adminToken
        self.allowedOrigins = allowedOrigins
        self.logsAdminReads = logsAdminReads
    }

    /// Registers a server-to-server key from its PEM text, as `openssl ec -pubout` writes it.
    package mutating func addServerKey(id: String, pem: String) throws {
        serverKeys[id] = try P256.Signing.PublicKey(pemRepresentation: pem)
    }

    /// The host as a URL writes it: an IPv6 address in brackets.
    var urlHost: String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }
}
