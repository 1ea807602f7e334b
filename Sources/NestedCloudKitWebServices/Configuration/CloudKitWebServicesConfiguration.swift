import Foundation

/// Where a ``CloudKitWebServicesDatabase`` sends its requests and how it authenticates them.
///
/// ```swift
/// let configuration = CloudKitWebServicesConfiguration(
///     containerIdentifier: "iCloud.com.example.School",
///     environment: .production,
///     database: .public,
///     authentication: .serverToServerKey(try ServerToServerKey(keyID: keyID, pemFile: keyURL))
/// )
/// ```
public struct CloudKitWebServicesConfiguration: Sendable {
    /// The container's environment.
    public enum Environment: String, Sendable, Hashable, CaseIterable, Codable {
        /// The environment apps in development use; its schema can still change.
        case development
        /// The environment apps on the App Store use.
        case production
    }

    /// Which of the container's databases to reach.
    public enum Database: String, Sendable, Hashable, CaseIterable {
        /// The database every user of the app shares. The only one server-to-server keys reach.
        case `public`
        /// The current user's own records; needs an API token and the user's web auth token.
        case `private`
        /// Records other users share with the current user; needs an API token and the user's web auth token.
        case shared
    }

    /// CloudKit Web Services' address.
    public static let appleServerURL =
        URL(string: "https://api.apple-cloudkit.com")
        ?? URL(fileURLWithPath: "/")  // The literal is a valid URL; the fallback only satisfies the type checker.

    /// The container's identifier, such as `iCloud.com.example.School`.
    public var containerIdentifier: String
    /// The container's environment.
    public var environment: Environment
    /// The database to reach.
    public var database: Database
    /// How requests prove who sends them.
    public var authentication: CloudKitWebServicesAuthentication
    /// The server to talk to: Apple's, or a stand-in in tests.
    public var serverURL: URL
    /// When to try a request again.
    public var retryPolicy: CloudKitWebServicesRetryPolicy
    /// How long one HTTP request may take, from asking for a connection to the last byte of the response.
    public var requestTimeout: Duration
    /// How long connecting to the server may take.
    ///
    /// It applies when the database makes its own HTTP client (the `httpClient` argument of
    /// ``CloudKitWebServicesDatabase/init(configuration:httpClient:logger:webAuthTokenRotated:)`` left out); that
    /// client also fails a request at once when the server refuses the connection, instead of trying to connect
    /// again until ``requestTimeout`` passes. A client you give connects as its own configuration says.
    public var connectTimeout: Duration
    /// The largest response body accepted, in bytes; a response of 200 records of up to 1 MB each fits.
    public var maximumResponseSize: Int
    /// Whether fetched records' assets are downloaded into ``assetCacheDirectory``, as `CKDatabase` downloads them,
    /// so that their contents are local files. Turn it off to get the download URLs only.
    public var downloadsAssets: Bool
    /// Where downloaded assets are kept: a folder per container in the temporary directory unless set.
    public var assetCacheDirectory: URL
    /// The most operations one request carries, 1 to 200: CloudKit's limit unless smaller requests suit the
    /// caller better (each then holds less data, so each retry resends less).
    public var maximumOperationsPerRequest: Int

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - containerIdentifier: The container's identifier, such as `iCloud.com.example.School`.
    ///   - environment: The container's environment.
    ///   - database: The database to reach.
    ///   - authentication: How requests prove who sends them.
    ///   - serverURL: The server to talk to; Apple's unless a test says otherwise.
    ///   - retryPolicy: When to try a throttled or unavailable request again.
    ///   - requestTimeout: How long one HTTP request may take.
    ///   - connectTimeout: How long connecting to the server may take.
    public init(
        containerIdentifier: String,
        environment: Environment,
        database: Database,
        authentication: CloudKitWebServicesAuthentication,
        serverURL: URL = appleServerURL,
        retryPolicy: CloudKitWebServicesRetryPolicy = .default,
        requestTimeout: Duration = .seconds(60),
        connectTimeout: Duration = .seconds(10)
    ) {
        self.containerIdentifier = containerIdentifier
        self.environment = environment
        self.database = database
        self.authentication = authentication
        self.serverURL = serverURL
        self.retryPolicy = retryPolicy
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        maximumResponseSize = 256 * 1024 * 1024
        maximumOperationsPerRequest = CloudKitWebServicesDatabase.maximumOperationsPerRequest
        downloadsAssets = true
        assetCacheDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("NestedCloudKitWebServices", isDirectory: true)
            .appendingPathComponent("\(containerIdentifier)-\(environment.rawValue)", isDirectory: true)
    }

    /// The path every endpoint of this database starts with: `/database/1/{container}/{environment}/{database}`.
    var databasePath: String {
        "\(containerPath)/\(database.rawValue)"
    }

    /// The path of the container's environment, under which the endpoints that belong to no database are
    /// (`tokens/create`, `tokens/register`).
    var containerPath: String {
        "/database/1/\(containerIdentifier)/\(environment.rawValue)"
    }

    /// Why the configuration can't work, or `nil`.
    var problem: String? {
        if containerIdentifier.isEmpty || containerIdentifier.contains("/") {
            return "the container identifier \"\(containerIdentifier)\" isn't one; it looks like iCloud.com.example.App"
        }
        if case .serverToServerKey = authentication, database != .public {
            return "server-to-server keys reach the public database only; the \(database.rawValue) database needs "
                + "an API token and the user's web auth token"
        }
        if connectTimeout <= .zero || requestTimeout <= .zero {
            return
                "the connect timeout (\(connectTimeout)) and the request timeout (\(requestTimeout)) must be positive"
        }
        if case .apiToken(_, webAuthToken: nil) = authentication, database != .public {
            return
                "the \(database.rawValue) database belongs to a user: give the user's web auth token with the API token"
        }
        return nil
    }
}
