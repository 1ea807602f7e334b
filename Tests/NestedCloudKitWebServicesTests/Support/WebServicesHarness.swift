import AsyncHTTPClient
import CloudKitTestServer
import Foundation
import Logging
import NestedCloudKitCodable

@testable import NestedCloudKitWebServices

/// A database pointed at a loopback server, with a client of its own so each test ends with no connection open.
enum WebServicesHarness {
    static let container = "iCloud.com.example.School"

    /// A retry policy fast enough for tests: a millisecond of backoff, five seconds at most.
    static let quickRetries = CloudKitWebServicesRetryPolicy(
        maximumAttempts: 3, initialBackoff: .milliseconds(1), maximumDelay: .seconds(5)
    )

    static func with<T: Sendable>(
        database: CloudKitWebServicesConfiguration.Database = .public,
        authentication: CloudKitWebServicesAuthentication? = nil,
        retryPolicy: CloudKitWebServicesRetryPolicy = quickRetries,
        assetCacheDirectory: URL? = nil,
        logger: Logger = Logger(label: "test"),
        webAuthTokenRotated: @escaping @Sendable (String) -> Void = { _ in },
        handler: @escaping LoopbackCloudKitServer.Handler,
        _ body: (CloudKitWebServicesDatabase, LoopbackCloudKitServer) async throws -> T
    ) async throws -> T {
        let authentication = try authentication ?? .serverToServerKey(TestKeys.serverToServerKey())
        return try await LoopbackCloudKitServer.with(handler) { server in
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                var configuration = CloudKitWebServicesConfiguration(
                    containerIdentifier: container, environment: .development, database: database,
                    authentication: authentication, serverURL: server.url, retryPolicy: retryPolicy,
                    // Generous: the loopback server answers on Swift's cooperative threads, which the suite's
                    // heaviest tests can keep busy for seconds on a 2-core machine.
                    requestTimeout: .seconds(120)
                )
                if let assetCacheDirectory { configuration.assetCacheDirectory = assetCacheDirectory }
                let cloud = try CloudKitWebServicesDatabase(
                    configuration: configuration, httpClient: client, logger: logger,
                    webAuthTokenRotated: webAuthTokenRotated
                )
                let result = try await body(cloud, server)
                try await client.shutdown()
                return result
            } catch {
                try? await client.shutdown()
                throw error
            }
        }
    }

    /// The path of an endpoint of the harness's database.
    static func path(_ endpoint: String, database: String = "public") -> String {
        "/database/1/\(container)/development/\(database)/\(endpoint)"
    }

    /// A record dictionary as CloudKit returns it, with the current user's real record name as the zone's owner.
    static func serverRecord(
        _ name: String, type: String = "Student", tag: String = "tag-1", fields: [String: Any] = [:],
        zone: String = "_defaultZone"
    ) -> [String: Any] {
        [
            "recordName": name, "recordType": type, "recordChangeTag": tag, "fields": fields,
            "zoneID": ["zoneName": zone, "ownerRecordName": "_7c3f2a9d"],
            "created": ["timestamp": 1_453_760_143_000, "userRecordName": "_7c3f2a9d", "deviceID": "2"],
            "modified": ["timestamp": 1_453_760_144_000, "userRecordName": "_7c3f2a9d", "deviceID": "3"],
            "pluginFields": [:], "someKeyFromTheFuture": true,
        ]
    }
}
