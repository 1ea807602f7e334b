import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A request as the loopback server received it.
public struct ReceivedRequest: Sendable {
    public var method: String
    /// The path without the query.
    public var path: String
    /// The query's items.
    public var query: [String: String]
    public var headers: [String: String]
    public var body: Data
    /// Whether the request carried a valid server-to-server signature of its date, body and path.
    public var isSignedWithTestKey: Bool

    /// The endpoint after the database path: `records/modify`.
    public var endpoint: String {
        path.components(separatedBy: "/").suffix(2).joined(separator: "/")
    }

    /// The body as a JSON object.
    public func json() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: body) as? [String: Any] ?? [:]
    }
}

/// A response for the loopback server to send.
public struct LoopbackResponse: Sendable {
    public var status: Int
    public var headers: [String: String] = [:]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response; the object is serialized with sorted keys.
    public static func json(_ object: Any, status: Int = 200, headers: [String: String] = [:]) -> LoopbackResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return LoopbackResponse(status: status, headers: headers, body: data)
    }

    /// A documented error dictionary, with the HTTP status the documentation gives its code.
    public static func serverError(_ status: Int, _ code: String, reason: String = "test", retryAfter: Double? = nil)
        -> LoopbackResponse
    {
        var object: [String: Any] = ["serverErrorCode": code, "reason": reason, "uuid": "00000000-test"]
        if let retryAfter { object["retryAfter"] = retryAfter }
        return json(object, status: status)
    }
}

/// An HTTP server on 127.0.0.1 that stands in for CloudKit Web Services in tests.
///
/// Every request is checked against the test key's public half and recorded; a handler written by each test
/// answers it, as the documentation says CloudKit would. Nothing leaves the machine.
public final class LoopbackCloudKitServer: Sendable {
    public typealias Handler = @Sendable (ReceivedRequest) async -> LoopbackResponse

    public let port: Int
    private let serverChannel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
    private let received = NIOLockedValueBox<[ReceivedRequest]>([])
    private let connections = NIOLockedValueBox<[any Channel]>([])
    private let handler: Handler

    /// The requests received so far, in order.
    public var requests: [ReceivedRequest] { received.withLockedValue { $0 } }

    public var url: URL {
        URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
    }

    private init(
        channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>,
        handler: @escaping Handler
    ) {
        serverChannel = channel
        port = channel.channel.localAddress?.port ?? 0
        self.handler = handler
    }

    /// Runs `body` with a server answering through `handler`, then stops it.
    public static func with<T: Sendable>(
        _ handler: @escaping Handler, _ body: (LoopbackCloudKitServer) async throws -> T
    ) async throws -> T {
        let server = LoopbackCloudKitServer(channel: try await bind(), handler: handler)
        let running = Task { await server.run() }
        defer { running.cancel() }
        do {
            let result = try await body(server)
            await server.stop()
            await running.value
            return result
        } catch {
            await server.stop()
            await running.value
            throw error
        }
    }

    /// Starts a server that answers through `handler` until the process ends: for databases whose tests don't
    /// give them a scope to stop in.
    public static func start(_ handler: @escaping Handler) async throws -> LoopbackCloudKitServer {
        let server = LoopbackCloudKitServer(channel: try await bind(), handler: handler)
        Task { await server.run() }
        return server
    }

    private static func bind() async throws -> NIOAsyncChannel<
        NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never
    > {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                        wrappingChannelSynchronously: channel)
                }
            }
    }

    private func run() async {
        await withDiscardingTaskGroup { group in
            try? await serverChannel.executeThenClose { inbound in
                for try await connection in inbound {
                    connections.withLockedValue { $0.append(connection.channel) }
                    group.addTask { await self.serve(connection) }
                }
            }
        }
    }

    private func stop() async {
        try? await serverChannel.channel.close()
        for connection in connections.withLockedValue({ $0 }) { try? await connection.close() }
    }

    private func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        try? await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            var body = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let requestHead):
                    head = requestHead
                    body.clear()
                case .body(var chunk):
                    body.writeBuffer(&chunk)
                case .end:
                    guard let head else { continue }
                    let request = Self.request(head, body: Data(body.readableBytesView))
                    received.withLockedValue { $0.append(request) }
                    let response = await handler(request)
                    var headers = HTTPHeaders(response.headers.map { ($0.key, $0.value) })
                    headers.replaceOrAdd(name: "Content-Type", value: "application/json")
                    headers.replaceOrAdd(name: "Content-Length", value: "\(response.body.count)")
                    let status = HTTPResponseStatus(statusCode: response.status)
                    try await outbound.write(
                        .head(HTTPResponseHead(version: head.version, status: status, headers: headers)))
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body))))
                    try await outbound.write(.end(nil))
                }
            }
        }
    }

    private static func request(_ head: HTTPRequestHead, body: Data) -> ReceivedRequest {
        let components = URLComponents(string: head.uri)
        let path = components?.path ?? head.uri
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value }
        var headers: [String: String] = [:]
        for (name, value) in head.headers { headers[name] = value }
        return ReceivedRequest(
            method: "\(head.method)", path: path, query: query, headers: headers, body: body,
            isSignedWithTestKey: isSigned(headers: head.headers, body: body, path: path)
        )
    }

    /// Checks the signature as CloudKit does: the test key's ID, and an ECDSA signature of `DATE:BODYHASH:SUBPATH`
    /// that the public key verifies.
    private static func isSigned(headers: HTTPHeaders, body: Data, path: String) -> Bool {
        guard headers.first(name: "X-Apple-CloudKit-Request-KeyID") == TestKeys.keyID,
            let date = headers.first(name: "X-Apple-CloudKit-Request-ISO8601Date"),
            let signatureText = headers.first(name: "X-Apple-CloudKit-Request-SignatureV1"),
            let signatureBytes = Data(base64Encoded: signatureText),
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: signatureBytes),
            let publicKey = try? TestKeys.publicKey()
        else { return false }
        let bodyHash = Data(SHA256.hash(data: body)).base64EncodedString()
        return publicKey.isValidSignature(signature, for: Data("\(date):\(bodyHash):\(path)".utf8))
    }
}
