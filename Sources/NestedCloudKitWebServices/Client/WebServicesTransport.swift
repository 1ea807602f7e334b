import AsyncHTTPClient
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NestedCloudKitCodable

/// Sends requests to CloudKit Web Services: authenticates them, retries them when the server says when, and turns
/// every failure into a ``CloudDatabaseError``.
///
/// Logs name the endpoint, the status and the attempt, never a token, a signature or the key.
struct WebServicesTransport: Sendable {
    let configuration: CloudKitWebServicesConfiguration
    let httpClient: HTTPClient
    let logger: Logger
    let session: WebAuthTokenSession?
    /// The connect timeout the client applies, when the transport made the client and so knows it.
    let connectTimeout: Duration?
    /// Where CloudKit's last `AUTHENTICATION_REQUIRED` said the user signs in.
    let signInURL = NIOLockedValueBox<URL?>(nil)

    static let webAuthTokenHeader = "X-Apple-CloudKit-Web-Auth-Token"

    /// - Parameter httpClient: The client to send with, or `nil` for one that connects within the configuration's
    ///   connect timeout and fails at once when the server refuses the connection.
    init(
        configuration: CloudKitWebServicesConfiguration, httpClient: HTTPClient?, logger: Logger,
        webAuthTokenRotated: @escaping @Sendable (String) -> Void
    ) {
        self.configuration = configuration
        self.httpClient = httpClient ?? DefaultHTTPClients.client(connectTimeout: configuration.connectTimeout)
        connectTimeout = httpClient == nil ? configuration.connectTimeout : nil
        self.logger = logger
        if case .apiToken(_, webAuthToken: let token?) = configuration.authentication {
            session = WebAuthTokenSession(token: token, rotated: webAuthTokenRotated)
        } else {
            session = nil
        }
    }

    /// The encoder of request bodies: sorted keys, so the same request is the same bytes every run.
    private static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// How an error dictionary for a whole request becomes the error thrown, unless the caller knows better.
    typealias ErrorMapping = @Sendable (WireServerError) -> CloudDatabaseError

    /// POSTs a JSON body to an endpoint of the database (`records/modify`, say) and decodes the response.
    ///
    /// - Parameters:
    ///   - location: Whether the endpoint is under the configuration's database (most are) or under the
    ///     container (`tokens/create`).
    ///   - mapError: The error of an error dictionary for the whole request; by default, the error as for any
    ///     request, without a record or zone.
    func post<Response: Decodable>(
        _ endpoint: String, _ body: some Encodable, as: Response.Type,
        under location: EndpointLocation = .database(nil), mapError: ErrorMapping? = nil
    ) async throws -> Response {
        let data: Data
        do {
            data = try Self.makeEncoder().encode(body)
        } catch let error as EncodingError {
            throw CloudDatabaseError.invalidArguments(Self.describe(error))
        }
        return try await send(.POST, endpoint, under: location, body: data, as: Response.self, mapError: mapError)
    }

    /// GETs an endpoint of the database (`zones/list`) and decodes the response.
    ///
    /// - Parameter database: The database whose path the endpoint is under, when it isn't the configuration's:
    ///   `users/caller` is under the public database's path whichever database the requests reach.
    func get<Response: Decodable>(
        _ endpoint: String, in database: CloudKitWebServicesConfiguration.Database? = nil, as: Response.Type
    ) async throws -> Response {
        try await send(.GET, endpoint, under: .database(database), body: nil, as: Response.self)
    }

    /// Where an endpoint's path is.
    enum EndpointLocation: Sendable {
        /// Under a database's path: the configuration's, unless one is named.
        case database(CloudKitWebServicesConfiguration.Database?)
        /// Under the container's environment, in no database (`tokens/create`).
        case container
    }

    private func send<Response: Decodable>(
        _ method: HTTPMethod, _ endpoint: String, under location: EndpointLocation,
        body: Data?, as: Response.Type, mapError: ErrorMapping? = nil
    ) async throws -> Response {
        var retry = 0
        let started = ContinuousClock.now
        while true {
            let (status, bytes) = try await exchange(method, endpoint, under: location, body: body)
            if status == 200 {
                // An empty body where the client reads nothing from the answer.
                if bytes.isEmpty, let ignored = WireIgnoredResponse() as? Response { return ignored }
                do {
                    return try JSONDecoder().decode(Response.self, from: bytes)
                } catch {
                    throw CloudDatabaseError.internalError(
                        "The response to \(endpoint) isn't what CloudKit Web Services documents: \(Self.describe(error))"
                    )
                }
            }
            let serverError = try? JSONDecoder().decode(WireServerError.self, from: bytes)
            if let signIn = serverError?.signInURL { signInURL.withLockedValue { $0 = signIn } }
            let error =
                serverError.map { mapError?($0) ?? $0.databaseError(recordID: nil, zoneID: .default) }
                ?? WireServerError.databaseError(status: status, body: String(decoding: bytes, as: UTF8.self))
            retry += 1
            let elapsed = ContinuousClock.now - started
            guard
                let delay = configuration.retryPolicy.delay(
                    beforeRetry: retry, retryAfter: serverError?.retryAfter, elapsed: elapsed
                )
            else {
                logger.debug(
                    "CloudKit request failed",
                    metadata: [
                        "endpoint": "\(endpoint)", "status": "\(status)", "attempts": "\(retry)",
                        "elapsed": "\(elapsed)",
                    ])
                throw error
            }
            // Debug, as swift-server libraries log what they handle themselves: the caller sees a retry only as
            // time, and a retry that fails in the end is thrown.
            logger.debug(
                "CloudKit asked to retry",
                metadata: [
                    "endpoint": "\(endpoint)", "status": "\(status)", "retry": "\(retry)", "delay": "\(delay)",
                ])
            try await Task.sleep(for: delay)
        }
    }

    /// One HTTP exchange: the status and the body.
    private func exchange(
        _ method: HTTPMethod, _ endpoint: String, under location: EndpointLocation, body: Data?
    ) async throws -> (Int, Data) {
        let subpath: String
        switch location {
        case .database(let database):
            var databaseConfiguration = configuration
            if let database { databaseConfiguration.database = database }
            subpath = "\(databaseConfiguration.databasePath)/\(endpoint)"
        case .container:
            subpath = "\(configuration.containerPath)/\(endpoint)"
        }
        var request = HTTPClientRequest(url: "")
        request.method = method
        request.headers.add(name: "Content-Type", value: "application/json")
        var query = ""
        var webAuthToken: String?
        switch configuration.authentication {
        case .serverToServerKey(let key):
            let signature: RequestSignature
            do {
                signature = try RequestSignature(key: key, date: Date(), body: body ?? Data(), subpath: subpath)
            } catch {
                throw CloudDatabaseError.internalError(
                    "The request to \(endpoint) couldn't be signed: \(type(of: error))")
            }
            for header in signature.headers { request.headers.add(name: header.name, value: header.value) }
        case .apiToken(let apiToken, _):
            query = "?ckAPIToken=\(Self.percentEncoded(apiToken))"
            if let session {
                // Waiting for the turn ends with `CancellationError` when the task is cancelled.
                let token = try await session.begin()
                webAuthToken = token
                query += "&ckWebAuthToken=\(Self.percentEncoded(token))"
            }
        }
        request.url = configuration.serverURL.absoluteString.trimmingSuffix("/") + subpath + query
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }

        let started = ContinuousClock.now
        var rotatedToken: String?
        let result: Result<(Int, Data), any Error>
        do {
            // The description of a network error names the failure and the host, not the query with the tokens.
            result = .success(
                try await mappingNetworkErrors(endpoint) {
                    // No logger for AsyncHTTPClient: at trace level it logs response heads, which carry the next token.
                    let response = try await httpClient.execute(
                        request, timeout: Self.timeAmount(configuration.requestTimeout))
                    rotatedToken = response.headers.first(name: Self.webAuthTokenHeader)
                    let buffer = try await response.body.collect(upTo: configuration.maximumResponseSize)
                    logger.debug(
                        "CloudKit request",
                        metadata: [
                            "endpoint": "\(endpoint)", "status": "\(response.status.code)",
                            "duration": "\(ContinuousClock.now - started)",
                        ])
                    return (Int(response.status.code), Data(buffer.readableBytesView))
                })
        } catch {
            result = .failure(error)
        }
        // Hand the turn on, and the new token to the app, before returning: a short-lived program must not end
        // with the only working token undelivered.
        if let session, webAuthToken != nil { await session.end(rotatingTo: rotatedToken) }
        return try result.get()
    }

    /// Runs an HTTP exchange with `server` (the database's unless given), turning what AsyncHTTPClient and NIO
    /// throw into ``CloudDatabaseError/networkFailure(_:)`` about `context`, and a cancelled task's failure into
    /// `CancellationError` (AsyncHTTPClient reports cancellation as an error of its own).
    func mappingNetworkErrors<T>(_ context: String, server: URL? = nil, _ body: () async throws -> T) async throws -> T
    {
        do {
            return try await body()
        } catch let error as CloudDatabaseError {
            throw error
        } catch {
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            throw CloudDatabaseError.networkFailure(
                "\(context): \(describeNetworkError(error, server: server ?? configuration.serverURL))",
                underlying: error)
        }
    }

    /// A server as a connection error names it: host and port.
    private static func serverName(_ url: URL) -> String {
        let host = url.host ?? url.absoluteString
        return url.port.map { "\(host):\($0)" } ?? host
    }

    /// A network failure in words a user can act on. NIO's and AsyncHTTPClient's own descriptions name their
    /// internals (`NIOConnectionError(host:port:dnsAError:...)`), and a timeout doesn't say which one passed.
    func describeNetworkError(_ error: any Error, server: URL) -> String {
        let serverName = Self.serverName(server)
        let refusal = "\(serverName) refused the connection: check the server URL, and that the server is running"
        switch error {
        case let error as NIOConnectionError:
            if let dnsError = error.dnsAError ?? error.dnsAAAAError {
                return "the server \(error.host) can't be found (\(dnsError)): check the server URL"
            }
            let causes = error.connectionErrors.map(\.error)
            if causes.contains(where: Self.isConnectionRefused) { return refusal }
            let reasons = causes.map { ($0 as? IOError).map { String(cString: strerror($0.errnoCode)) } ?? "\($0)" }
            return "can't connect to \(serverName)"
                + (reasons.isEmpty ? "" : ": " + Set(reasons).sorted().joined(separator: "; "))
        case let error where Self.isConnectionRefused(error):
            return refusal
        case let error as HTTPClientError where error == .connectTimeout:
            return "no connection to \(serverName) within the connect timeout"
                + (connectTimeout.map { " of \(Self.describe($0))" } ?? "") + ": check the server URL and the network"
        case let error as HTTPClientError where error == .deadlineExceeded:
            return
                "no response from \(serverName) within the request timeout of \(Self.describe(configuration.requestTimeout))"
        case let error as HTTPClientError:
            return "\(error)"
        default:
            return "\(type(of: error)): \(error)"
        }
    }

    private static func isConnectionRefused(_ error: any Error) -> Bool {
        (error as? IOError)?.errnoCode == ECONNREFUSED
    }

    /// A duration as people write it: `10 s`, `250 ms`.
    static func describe(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 { return "\(seconds) s" }
        return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000) ms"
    }

    /// The request timeout as NIO counts time.
    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        // Clamped: a caller's duration of centuries must not overflow NIO's nanoseconds.
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .nanoseconds(seconds < 0 ? .min : .max) }
        let (total, overflowAdding) = nanoseconds.addingReportingOverflow(attoseconds / 1_000_000_000)
        return .nanoseconds(overflowAdding ? (seconds < 0 ? .min : .max) : total)
    }

    private static func percentEncoded(_ value: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// An encoding or decoding error as a sentence with its coding path (`operations[2].record.fields.score`).
    static func describe(_ error: any Error) -> String {
        let (context, path): (String, [any CodingKey]) =
            switch error {
            case EncodingError.invalidValue(_, let context): (context.debugDescription, context.codingPath)
            case DecodingError.dataCorrupted(let context),
                DecodingError.keyNotFound(_, let context),
                DecodingError.typeMismatch(_, let context),
                DecodingError.valueNotFound(_, let context):
                (context.debugDescription, context.codingPath)
            default: ("\(error)", [])
            }
        let joined = path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return path.isEmpty ? context : "\(context) at \(joined.trimmingPrefix("."))"
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
