import CloudKitTestServer
import Foundation
import NestedCloudKitEmulator

@testable import NestedCloudKitWebServices

/// An emulator in this process that knows the test key, and clients of it.
enum EmulatorHarness {
    /// Runs `body` with an emulator (in memory, the test key registered), then stops it.
    static func with<T: Sendable>(_ body: (CloudKitEmulator) async throws -> T) async throws -> T {
        var configuration = EmulatorConfiguration()
        configuration.serverKeys[TestKeys.keyID] = try TestKeys.publicKey()
        return try await CloudKitEmulator.stoppingEmulatorsStarted {
            try await body(try await CloudKitEmulator.start(configuration))
        }
    }

    /// A client of the emulator's public database, signing with the test key unless given another.
    static func publicDatabase(_ emulator: CloudKitEmulator, key: ServerToServerKey? = nil) throws
        -> CloudKitWebServicesDatabase
    {
        try CloudKitWebServicesDatabase(
            configuration: configuration(
                emulator, database: .public, authentication: .serverToServerKey(key ?? TestKeys.serverToServerKey())))
    }

    /// A client of `user`'s private database, signed in through the emulator's admin API.
    static func privateDatabase(_ emulator: CloudKitEmulator, user: String) async throws
        -> CloudKitWebServicesDatabase
    {
        try CloudKitWebServicesDatabase(
            configuration: configuration(
                emulator, database: .private,
                authentication: .apiToken("api-token", webAuthToken: await emulator.signIn(user: user))))
    }

    /// A client of the public database with an API token and no signed-in user.
    static func anonymousDatabase(_ emulator: CloudKitEmulator) throws -> CloudKitWebServicesDatabase {
        try CloudKitWebServicesDatabase(
            configuration: configuration(
                emulator, database: .public, authentication: .apiToken("api-token", webAuthToken: nil)))
    }

    private static func configuration(
        _ emulator: CloudKitEmulator, database: CloudKitWebServicesConfiguration.Database,
        authentication: CloudKitWebServicesAuthentication
    ) -> CloudKitWebServicesConfiguration {
        CloudKitWebServicesConfiguration(
            containerIdentifier: WebServicesHarness.container, environment: .development, database: database,
            authentication: authentication, serverURL: emulator.url, retryPolicy: .never,
            // Generous: the emulator answers on Swift's cooperative threads, which the suite's heaviest tests can
            // keep busy for seconds on a 2-core machine.
            requestTimeout: .seconds(120))
    }
}
