import ArgumentParser
import Foundation
import NestedCloudKitCodable
import NestedCloudKitWebServices

/// The options every command shares: which database, and how to authenticate.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "The container identifier, such as iCloud.com.example.App. [env: CLOUDKIT_CONTAINER]")
    var container: String?

    @Option(help: "development or production.")
    var environment: CloudKitWebServicesConfiguration.Environment = .development

    @Option(help: "public, private or shared.")
    var database: CloudKitWebServicesConfiguration.Database = .public

    @Option(help: "The server-to-server key's ID. [env: CLOUDKIT_KEY_ID]")
    var keyID: String?

    @Option(
        help: "The server-to-server key's PEM file. [env: CLOUDKIT_KEY_FILE; or the PEM text in CLOUDKIT_PRIVATE_KEY]")
    var keyFile: String?

    @Option(help: "An API token, instead of a key. [env: CLOUDKIT_API_TOKEN]")
    var apiToken: String?

    @Option(help: "A signed-in user's web auth token, with the API token. [env: CLOUDKIT_WEB_AUTH_TOKEN]")
    var webAuthToken: String?

    @Option(
        help: """
            A file holding the user's web auth token, rewritten with each new one CloudKit gives (the old one stops \
            working). [env: CLOUDKIT_WEB_AUTH_TOKEN_FILE]
            """)
    var webAuthTokenFile: String?

    @Option(help: ArgumentHelp("The server to talk to.", visibility: .hidden))
    var serverURL: String?

    @Option(help: "Seconds to wait for a connection to CloudKit.")
    var connectTimeout: Double = 5

    @Option(help: "Seconds to wait for each response.")
    var timeout: Double = 60

    @Flag(help: "Print CloudKit Web Services JSON instead of trees.")
    var json = false

    func validate() throws {
        // A day bounds the conversion to milliseconds; nobody waits longer for one response.
        guard (0.001...86_400).contains(connectTimeout), (0.001...86_400).contains(timeout) else {
            throw ValidationError("--connect-timeout and --timeout take a number of seconds, at most 86400.")
        }
    }

    /// Runs `body` with the database the options describe, and fails loudly where the user must act: CloudKit
    /// wants a signed-in user (the sign-in address is printed), or a new web auth token couldn't be stored (the old
    /// one no longer works, so the new one is printed rather than lost).
    func withDatabase<T>(
        environment variables: [String: String] = ProcessInfo.processInfo.environment,
        _ body: (CloudKitWebServicesDatabase) async throws -> T
    ) async throws -> T {
        let tokenFile = (webAuthTokenFile ?? variables["CLOUDKIT_WEB_AUTH_TOKEN_FILE"]).map {
            WebAuthTokenFile(path: $0)
        }
        let database = try makeDatabase(environment: variables, tokenFile: tokenFile)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(database))
        } catch {
            result = .failure(error)
        }
        if let failure = tokenFile?.failure {
            // The command's own failure first, unless it has said it already (an exit code).
            if case .failure(let error) = result, !(error is ExitCode) {
                FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
            }
            throw failure
        }
        if case .failure(let error) = result, case .notAuthenticated? = error as? CloudDatabaseError {
            throw CKWSFailure.signInNeeded(at: database.signInURL)
        }
        return try result.get()
    }

    /// The database the options describe, storing each new web auth token in `tokenFile`.
    func makeDatabase(
        environment variables: [String: String] = ProcessInfo.processInfo.environment,
        tokenFile: WebAuthTokenFile? = nil
    ) throws -> CloudKitWebServicesDatabase {
        guard let container = container ?? variables["CLOUDKIT_CONTAINER"] else {
            throw ValidationError("Name the container with --container or CLOUDKIT_CONTAINER.")
        }
        var configuration = CloudKitWebServicesConfiguration(
            containerIdentifier: container, environment: environment, database: database,
            authentication: try authentication(variables),
            requestTimeout: .milliseconds(Int64(timeout * 1000)),
            connectTimeout: .milliseconds(Int64(connectTimeout * 1000))
        )
        if let serverURL {
            guard let url = URL(string: serverURL) else {
                throw ValidationError("--server-url \(serverURL) isn't a URL.")
            }
            configuration.serverURL = url
        }
        guard let tokenFile else { return try CloudKitWebServicesDatabase(configuration: configuration) }
        return try CloudKitWebServicesDatabase(configuration: configuration) { token in tokenFile.store(token) }
    }

    private func authentication(_ variables: [String: String]) throws -> CloudKitWebServicesAuthentication {
        if let apiToken = apiToken ?? variables["CLOUDKIT_API_TOKEN"] {
            return .apiToken(
                apiToken,
                webAuthToken: try webAuthToken ?? variables["CLOUDKIT_WEB_AUTH_TOKEN"] ?? storedWebAuthToken(variables))
        }
        guard let keyID = keyID ?? variables["CLOUDKIT_KEY_ID"] else {
            throw ValidationError(
                "Give a server-to-server key (--key-id and --key-file) or an API token (--api-token).")
        }
        if let path = keyFile ?? variables["CLOUDKIT_KEY_FILE"] {
            return .serverToServerKey(try ServerToServerKey(keyID: keyID, pemFile: URL(fileURLWithPath: path)))
        }
        if let pem = variables["CLOUDKIT_PRIVATE_KEY"] {
            return .serverToServerKey(try ServerToServerKey(keyID: keyID, pemRepresentation: pem))
        }
        throw ValidationError(
            "Give the key's PEM file with --key-file or CLOUDKIT_KEY_FILE, or its text in CLOUDKIT_PRIVATE_KEY.")
    }

    /// The token in the web auth token file, if one is named.
    private func storedWebAuthToken(_ variables: [String: String]) throws -> String? {
        guard let path = webAuthTokenFile ?? variables["CLOUDKIT_WEB_AUTH_TOKEN_FILE"] else { return nil }
        do {
            return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw ValidationError(
                "Can't read the web auth token file \(path): \((error as NSError).localizedDescription)")
        }
    }

    /// A zone ID from a zone name and an optional owner.
    static func zoneID(_ name: String?, owner: String?) -> CloudRecord.ZoneID {
        CloudRecord.ZoneID(
            zoneName: name ?? CloudRecord.ZoneID.defaultZoneName,
            ownerName: owner ?? CloudRecord.ZoneID.currentUserOwnerName)
    }
}

extension CloudKitWebServicesConfiguration.Environment: ExpressibleByArgument {}
extension CloudKitWebServicesConfiguration.Database: ExpressibleByArgument {}
