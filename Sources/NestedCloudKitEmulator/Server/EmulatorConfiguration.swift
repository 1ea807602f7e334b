import Crypto
import Foundation
import NestedCloudKitCodable

/// How an emulator is set up: where it listens, where it keeps its data, and who may call it.
public struct EmulatorConfiguration: Sendable {
    /// The address to listen on; loopback by default, since the emulator checks no TLS and trusts its admin API.
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
    /// How long a poll of a notification URL waits before answering with an empty body.
    public var notificationPollTimeout: Duration
    /// The time before the admin API's offset: the system's, unless a test injects its own.
    public var clock: any CloudClock

    /// A configuration: by default loopback on a free port, in memory, any API token, the development environment.
    public init(
        host: String = "127.0.0.1", port: Int = 0, storage: EmulatorStorage = .inMemory,
        serverKeys: [String: P256.Signing.PublicKey] = [:], apiTokens: Set<String> = [],
        environment: EmulatorEnvironment = .development, notificationPollTimeout: Duration = .seconds(25),
        clock: any CloudClock = SystemCloudClock()
    ) {
        self.clock = clock
        self.host = host
        self.port = port
        self.storage = storage
        self.serverKeys = serverKeys
        self.apiTokens = apiTokens
        self.environment = environment
        self.notificationPollTimeout = notificationPollTimeout
    }

    /// Registers a server-to-server key from its PEM text, as `openssl ec -pubout` writes it.
    public mutating func addServerKey(id: String, pem: String) throws {
        serverKeys[id] = try P256.Signing.PublicKey(pemRepresentation: pem)
    }
}
