import AsyncHTTPClient
import Foundation
import Logging
import NestedCloudKitCodable
import NIOCore
import NIOHTTP1

/// Sends requests to CloudKit Web Services: authenticates them, retries them when the server says when, and turns
/// every failure into a ``CloudDatabaseError``.
///
/// Logs name the endpoint, the status and the attempt, never a token, a signature or the key.
struct WebServicesTransport: Sendable {
    let configuration: CloudKitWebServicesConfiguration
    let httpClient: HTTPClient
    let logger: Logger
    let session: WebAuthTokenSession?

    static let webAuthTokenHeader = "X-Apple-CloudKit-Web-Auth-Token"

    init(configuration: CloudKitWebServicesConfiguration, httpClient: HTTPClient, logger: Logger,
         webAuthTokenRotated: @escaping @Sendable (String) -> Void) {
        self.configuration = configuration
        self.httpClient = httpClient
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

    /// POSTs a JSON body to an endpoint of the database (`records/modify`, say) and decodes the response.
    func post<Response: Decodable>(_ endpoint: String, _ body: some Encodable, as: Response.Type) async throws -> Response {
        let data: Data
        do {
            data = try Self.makeEncoder().encode(body)
        } catch let error as EncodingError {
            throw CloudDatabaseError.invalidArguments(Self.describe(error))
        }
        return try await send(.POST, endpoint, body: data, as: Response.self)
    }

    /// GETs an endpoint of the database (`zones/list`) and decodes the response.
    func get<Response: Decodable>(_ endpoint: String, as: Response.Type) async throws -> Response {
        try await send(.GET, endpoint, body: nil, as: Response.self)
    }

    private func send<Response: Decodable>(
        _ method: HTTPMethod, _ endpoint: String, body: Data?, as: Response.Type
    ) async throws -> Response {
        var retry = 0
        while true {
            let (status, bytes) = try await exchange(method, endpoint, body: body)
            if status == 200 {
                do {
                    return try JSONDecoder().decode(Response.self, from: bytes)
                } catch {
                    throw CloudDatabaseError.internalError(
                        "The response to \(endpoint) isn't what CloudKit Web Services documents: \(Self.describe(error))"
                    )
                }
            }
            let serverError = try? JSONDecoder().decode(WireServerError.self, from: bytes)
            let error = serverError?.databaseError(recordID: nil, zoneID: .default)
                ?? WireServerError.databaseError(status: status, body: String(decoding: bytes, as: UTF8.self))
            retry += 1
            guard let delay = configuration.retryPolicy.delay(beforeRetry: retry, retryAfter: serverError?.retryAfter) else {
                logger.debug("CloudKit request failed", metadata: ["endpoint": "\(endpoint)", "status": "\(status)"])
                throw error
            }
            logger.info("CloudKit asked to retry", metadata: [
                "endpoint": "\(endpoint)", "status": "\(status)", "retry": "\(retry)", "delay": "\(delay)",
            ])
            try await Task.sleep(for: delay)
        }
    }

    /// One HTTP exchange: the status and the body.
    private func exchange(_ method: HTTPMethod, _ endpoint: String, body: Data?) async throws -> (Int, Data) {
        let subpath = "\(configuration.databasePath)/\(endpoint)"
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
                throw CloudDatabaseError.internalError("The request to \(endpoint) couldn't be signed: \(type(of: error))")
            }
            for header in signature.headers { request.headers.add(name: header.name, value: header.value) }
        case .apiToken(let apiToken, _):
            query = "?ckAPIToken=\(Self.percentEncoded(apiToken))"
            if let session {
                let token = await session.begin()
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
            result = .success(try await Self.mappingNetworkErrors(endpoint) {
                // No logger for AsyncHTTPClient: at trace level it logs response heads, which carry the next token.
                let response = try await httpClient.execute(request, timeout: Self.timeAmount(configuration.requestTimeout))
                rotatedToken = response.headers.first(name: Self.webAuthTokenHeader)
                let buffer = try await response.body.collect(upTo: configuration.maximumResponseSize)
                logger.debug("CloudKit request", metadata: [
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

    /// Runs an HTTP exchange, turning what AsyncHTTPClient and NIO throw into
    /// ``CloudDatabaseError/networkFailure(_:)`` about `context`, and a cancelled task's failure into
    /// `CancellationError` (AsyncHTTPClient reports cancellation as an error of its own).
    static func mappingNetworkErrors<T>(_ context: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as CloudDatabaseError {
            throw error
        } catch {
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            throw CloudDatabaseError.networkFailure("\(context): \(describeNetworkError(error))")
        }
    }

    /// The request timeout as NIO counts time.
    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    private static func percentEncoded(_ value: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    private static func describeNetworkError(_ error: any Error) -> String {
        if let error = error as? HTTPClientError { return "\(error)" }
        return "\(type(of: error)): \(error)"
    }

    /// An encoding or decoding error as a sentence with its coding path (`operations[2].record.fields.score`).
    static func describe(_ error: any Error) -> String {
        let (context, path): (String, [any CodingKey]) = switch error {
        case EncodingError.invalidValue(_, let context): (context.debugDescription, context.codingPath)
        case DecodingError.dataCorrupted(let context),
             DecodingError.keyNotFound(_, let context),
             DecodingError.typeMismatch(_, let context),
             DecodingError.valueNotFound(_, let context): (context.debugDescription, context.codingPath)
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
