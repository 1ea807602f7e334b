import AsyncHTTPClient
import NIOConcurrencyHelpers

/// The HTTP clients databases use when the app gives none: one per connect timeout, kept for the life of the
/// process as AsyncHTTPClient's own `HTTPClient.shared` is, so it is never shut down and needs no owner.
enum DefaultHTTPClients {
    private static let clients = NIOLockedValueBox<[Duration: HTTPClient]>([:])

    /// The client that connects within `connectTimeout`.
    static func client(connectTimeout: Duration) -> HTTPClient {
        clients.withLockedValue { clients in
            if let client = clients[connectTimeout] { return client }
            var configuration = HTTPClient.Configuration.singletonConfiguration
            configuration.timeout.connect = WebServicesTransport.timeAmount(connectTimeout)
            // AsyncHTTPClient otherwise keeps trying to connect until the request's deadline, and then reports the
            // last attempt's error: a wrong server URL or a server that is down would take the whole request
            // timeout to fail. Failing at once says what happened; the failure is retryable for callers that retry.
            configuration.connectionPool.retryConnectionEstablishment = false
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            clients[connectTimeout] = client
            return client
        }
    }
}
