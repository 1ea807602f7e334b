import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

@testable import NestedCloudKitEmulator

/// The emulator's router driven directly, without a server, as if it listened on ``port``: every middleware and
/// route the server has, with requests that carry any header a browser or a hostile page would send (`Origin`,
/// `Sec-Fetch-Site`, a rebinding page's `Host`), which an HTTP client library doesn't let a test choose.
struct EmulatorRouterHarness {
    static let port = 8123
    let state: EmulatorState
    let responder: RouterResponder<EmulatorRequestContext>
    var container = "iCloud.com.example.HandlerTests"

    init(_ configuration: EmulatorConfiguration = EmulatorConfiguration()) {
        state = EmulatorState(configuration: configuration, clock: EmulatorClock(base: configuration.clock))
        state.boundPort = Self.port
        responder = EmulatorRouter.make(state: state).buildResponder()
    }

    /// The `Host` header a client of the emulator sends.
    static let host = "127.0.0.1:\(port)"

    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: Data

        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var text: String { String(decoding: body, as: UTF8.self) }

        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    /// Sends a request; `Host` is the emulator's own unless `headers` names another.
    func send(_ method: String, _ target: String, headers: [String: String] = [:], json: Any? = nil, body: Data? = nil)
        async throws -> Answer
    {
        var all = ["Host": Self.host]
        for (name, value) in headers {
            all = all.filter { $0.key.lowercased() != name.lowercased() }
            all[name] = value
        }
        let data = try body ?? json.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        // HTTP/1's Host header reaches Hummingbird as the request's authority.
        let host = all.first { $0.key.lowercased() == "host" }?.value
        var fields = HTTPFields()
        for (name, value) in all where name.lowercased() != "host" {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        if !data.isEmpty { fields[.contentLength] = String(data.count) }
        let request = Request(
            head: HTTPRequest(
                method: HTTPRequest.Method(method) ?? .get, scheme: "http", authority: host, path: target,
                headerFields: fields),
            body: RequestBody(buffer: ByteBuffer(bytes: data)))
        let response = try await responder.respond(
            to: request, context: EmulatorRequestContext(logger: Logger(label: "emulator-harness")))
        var headers: [String: String] = [:]
        for field in response.headers { headers[field.name.rawName] = field.value }
        let collected = CollectedBody()
        try await response.body.write(BodyCollector(collected: collected))
        return Answer(status: response.status.code, headers: headers, body: collected.data)
    }

    private final class CollectedBody {
        var data = Data()
    }

    /// Collects a response's body, as a connection would send it.
    private struct BodyCollector: ResponseBodyWriter {
        let collected: CollectedBody

        mutating func write(_ buffer: ByteBuffer) async throws {
            collected.data.append(contentsOf: buffer.readableBytesView)
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    /// A database request of a signed-in user, with the user's current token (rotated by each answer).
    func database(
        _ scope: String, _ endpoint: String, token: String?, json: Any, headers: [String: String] = [:]
    ) async throws -> Answer {
        let environment = state.configuration.environment.rawValue
        var target = "/database/1/\(container)/\(environment)/\(scope)/\(endpoint)?ckAPIToken=test"
        if let token {
            target += "&ckWebAuthToken=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token)
        }
        return try await send("POST", target, headers: headers, json: json)
    }

    /// A signed-in session of one user: each answer's token is the next request's.
    final class Session {
        let harness: EmulatorRouterHarness
        var token: String

        init(_ harness: EmulatorRouterHarness, user: String) async {
            self.harness = harness
            token = await harness.state.tokens.issue(for: user)
        }

        func call(_ endpoint: String, _ json: Any, scope: String = "private") async throws -> Answer {
            let answer = try await harness.database(scope, endpoint, token: token, json: json)
            token = answer.header("X-Apple-CloudKit-Web-Auth-Token") ?? token
            return answer
        }
    }

    /// A web auth token for a user, as `CloudKitEmulator.signIn(user:)` gives one.
    func signIn(user: String) async -> String {
        await state.tokens.issue(for: user)
    }

    /// Imports a container's schema into the emulator's environment, as `CloudKitEmulator.importSchema` does.
    func importSchema(_ text: String) async throws {
        try await state.schema.importSchema(text, container: container, environment: state.configuration.environment)
    }

    /// Closes the databases, as the server does when it stops.
    func close() async {
        await state.registry.close()
    }
}
