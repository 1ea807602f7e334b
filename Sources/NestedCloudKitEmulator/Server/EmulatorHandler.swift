import Foundation
import NestedCloudKitCodable

/// Answers one HTTP request: CloudKit's database paths, the uploads, downloads and notification URLs the
/// emulator hands out, the sign-in page, the admin API and the dashboard. Independent of the HTTP server, so the
/// server stays a thin adapter.
struct EmulatorHandler: Sendable {
    let state: EmulatorState

    /// The headers CloudKit exposes to browsers, so CloudKit JS can read the rotated web auth token. Only CloudKit's
    /// own paths and the URLs they hand out (uploads, downloads, notifications) carry them: CloudKit JS calls those
    /// from the app's page, while the admin API, the dashboard and the sign-in page answer no other origin.
    static let corsHeaders: [String: String] = [
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
        "Access-Control-Allow-Headers":
            "Content-Type, X-Apple-CloudKit-Request-KeyID, X-Apple-CloudKit-Request-ISO8601Date, "
            + "X-Apple-CloudKit-Request-SignatureV1, X-Apple-CloudKit-Web-Auth-Token",
        "Access-Control-Expose-Headers":
            "X-Apple-Request-UUID, X-Apple-CloudKit-Web-Auth-Token, X-Responding-Instance, Via",
    ]

    static let webAuthTokenHeader = "X-Apple-CloudKit-Web-Auth-Token"

    static let adminPrefix = "/emulator/v1/"

    func respond(to incoming: EmulatorRequest) async -> EmulatorResponse {
        let start = ContinuousClock.now
        var request = incoming
        var user: String?
        var response: EmulatorResponse
        do throws(ServerError) {
            // First of all: no URL is built, and nothing answered, for a Host that isn't the emulator's.
            request.baseURL = "http://" + (try state.origins.checkedHost(request.header("host")))
            if request.bodyWasTooLarge {
                // "request too large" is what the Web Services client reads as limitExceeded: split the batch.
                throw ServerError(
                    .badRequest,
                    "request too large: the body holds more than the \(state.configuration.maximumRequestBodySize) bytes the emulator reads; split the request (CloudKit takes 200 operations and 1 MB a record), and send large values as assets",
                    status: 413)
            }
            (response, user) = try await route(request)
        } catch {
            response = .error(error)
        }
        if Self.isCrossOrigin(request.path) {
            for (name, value) in Self.corsHeaders { response.headers[name] = value }
        }
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Apple-Request-UUID"] = UUID().uuidString.lowercased()
        if isLogged(request) {
            let elapsed = ContinuousClock.now - start
            state.log.append(
                RequestLog.Entry(
                    time: state.clock.now(), method: request.method, path: Self.loggedPath(request.path),
                    status: response.status,
                    durationMilliseconds: Double(elapsed.components.attoseconds) / 1e15
                        + Double(elapsed.components.seconds) * 1000,
                    user: user, serverErrorCode: response.serverErrorCode))
        }
        return response
    }

    /// Whether a path answers pages of any origin, as CloudKit's do: the database and device paths, and the upload,
    /// download and notification URLs they hand out (whose tokens are their credentials).
    static func isCrossOrigin(_ path: String) -> Bool {
        path.hasPrefix("/database/") || path.hasPrefix("/device/") || path.hasPrefix(AssetsEndpoint.uploadPrefix)
            || path.hasPrefix(AssetsEndpoint.downloadPrefix) || path.hasPrefix(courierPrefix)
    }

    /// Whether the request log keeps a request: not the dashboard page, the log itself, nor (unless configured)
    /// the admin API's reads, which the dashboard polls every two seconds.
    private func isLogged(_ request: EmulatorRequest) -> Bool {
        let path = request.path
        if path == "/" || path == "/index.html" || path.hasPrefix(Self.adminPrefix + "requests") { return false }
        if path.hasPrefix(Self.adminPrefix), ["GET", "HEAD", "OPTIONS"].contains(request.method) {
            return state.configuration.logsAdminReads
        }
        return true
    }

    /// The path as the request log shows it: a notification, upload, download or share URL's token is its
    /// credential, so it is left out.
    static func loggedPath(_ path: String) -> String {
        for prefix in [courierPrefix, AssetsEndpoint.uploadPrefix, AssetsEndpoint.downloadPrefix, SharePage.prefix]
        where path.hasPrefix(prefix) {
            return prefix + "(token)"
        }
        return path
    }

    private func route(_ request: EmulatorRequest) async throws(ServerError) -> (EmulatorResponse, String?) {
        let path = request.path
        if path.hasPrefix(Self.adminPrefix) {
            try AdminAccess(origins: state.origins, adminToken: state.configuration.adminToken).check(request)
            if request.method == "OPTIONS" { return (EmulatorResponse(status: 204, body: Data()), nil) }
            return (try await AdminAPI(state: state).respond(to: request), nil)
        }
        if request.method == "OPTIONS" { return (EmulatorResponse(status: 204, body: Data()), nil) }
        if path == "/" || path == "/index.html" { return (.html(DashboardPage.html), nil) }
        if path.hasPrefix("/emulator/sign-in") { return (try await SignInPage.respond(to: request, state: state), nil) }
        if path.hasPrefix(AssetsEndpoint.uploadPrefix), request.method == "POST" {
            let id = String(path.dropFirst(AssetsEndpoint.uploadPrefix.count))
            return (.json(try AssetsEndpoint.upload(request, id: id, state: state)), nil)
        }
        if path.hasPrefix(AssetsEndpoint.downloadPrefix) {
            let token = path.dropFirst(AssetsEndpoint.downloadPrefix.count).split(separator: "/").first.map(String.init)
            return (try await AssetsEndpoint.download(token ?? "", state: state), nil)
        }
        if path.hasPrefix(Self.courierPrefix) {
            return (try await poll(String(path.dropFirst(Self.courierPrefix.count))), nil)
        }
        if path.hasPrefix(SharePage.prefix), request.method == "GET" {
            return (
                try await SharePage.respond(shortGUID: String(path.dropFirst(SharePage.prefix.count)), state: state),
                nil
            )
        }
        return try await database(request)
    }

    // MARK: Notifications

    static let courierPrefix = "/emulator/courier/"

    private func poll(_ token: String) async throws(ServerError) -> EmulatorResponse {
        guard await state.notifications.isKnown(token) else {
            throw ServerError(.notFound, "no notification URL \(token): ask tokens/create for one")
        }
        guard let payload = await state.notifications.poll(token) else {
            // The courier's keepalive: an empty answer, after which the client polls again.
            return EmulatorResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data())
        }
        return .json(payload)
    }

    // MARK: Databases

    /// `/database/1/CONTAINER/ENVIRONMENT/DATABASE/ENTITY/ACTION`, and the token paths, with and without a
    /// database, under `/database/1/` and `/device/1/` (FIDELITY.md).
    private func database(_ request: EmulatorRequest) async throws(ServerError) -> (EmulatorResponse, String?) {
        // Split before decoding, so that an encoded slash stays inside the container's name, where it is refused.
        let parts = request.rawPath.split(separator: "/", omittingEmptySubsequences: true).map {
            String($0).removingPercentEncoding ?? String($0)
        }
        guard parts.count >= 5, parts[0] == "database" || parts[0] == "device", parts[1] == "1" else {
            throw ServerError(
                .notFound, "no endpoint at \(request.path): CloudKit's paths start /database/1/CONTAINER/ENVIRONMENT/")
        }
        let container = parts[2]
        try DatabaseNames.check(container: container)
        guard let environment = EmulatorEnvironment(rawValue: parts[3]) else {
            throw .badRequest("unknown environment \(parts[3]): development or production")
        }
        guard environment == state.configuration.environment else {
            throw .badRequest(
                "this emulator serves the \(state.configuration.environment.rawValue) environment: start it with --environment \(environment.rawValue)"
            )
        }
        var rest = Array(parts[4...])
        var scope = DatabaseKey.Scope.private
        if let named = DatabaseKey.Scope(rawValue: rest[0]) {
            scope = named
            rest.removeFirst()
        } else if rest[0] != "tokens" {
            throw .badRequest("unknown database \(rest[0]): public, private or shared")
        }
        let endpoint = rest.joined(separator: "/")
        let caller = try await authenticate(request, scope: scope, container: container)
        var nextToken: String?
        if case .user(_, let next) = caller { nextToken = next }
        var response: EmulatorResponse
        do throws(ServerError) {
            if let fault = state.faults.take(for: request) {
                if fault.latencyMilliseconds > 0 {
                    try? await Task.sleep(for: .milliseconds(Int(fault.latencyMilliseconds)))
                }
                if let code = fault.serverErrorCode.flatMap(ServerError.Code.init(rawValue:)) {
                    throw ServerError(code, "injected by emulator fault \(fault.id)", retryAfter: fault.retryAfter)
                }
                response = try await answer(
                    request, endpoint: endpoint, scope: scope, container: container, environment: environment,
                    caller: caller)
                response.isLost = fault.loseResponse
            } else {
                response = try await answer(
                    request, endpoint: endpoint, scope: scope, container: container, environment: environment,
                    caller: caller)
            }
        } catch {
            response = .error(error)
        }
        if let nextToken { response.headers[Self.webAuthTokenHeader] = nextToken }
        return (response, caller.userName)
    }

    private func answer(
        _ request: EmulatorRequest, endpoint: String, scope: DatabaseKey.Scope, container: String,
        environment: EmulatorEnvironment, caller: Caller
    ) async throws(ServerError) -> EmulatorResponse {
        let body: JSONValue
        do {
            body = try JSONValue.parse(request.body)
        } catch {
            throw .badRequest("the body isn't JSON: \(error)")
        }
        if endpoint.hasPrefix("tokens/") {
            return .json(
                try await tokens(
                    endpoint, body: body, request: request, container: container, environment: environment,
                    caller: caller))
        }
        let key = DatabaseKey(container: container, environment: environment, scope: scope, user: caller.userName)
        let handle = try await state.registry.handle(for: key)
        let context = DatabaseRequest(
            request: request, body: body, handle: handle, caller: caller,
            coding: state.coding(for: handle, baseURL: request.baseURL), state: state)
        let result: JSONValue
        switch endpoint {
        case "records/modify": result = try await RecordsEndpoint.modify(context)
        case "records/lookup": result = try await RecordsEndpoint.lookUp(context)
        case "records/query": result = try await QueryEndpoint.query(context)
        case "records/changes": result = try await ChangesEndpoint.records(context)
        case "changes/zone": result = try await ChangesEndpoint.zones(context)
        case "changes/database": result = try await ChangesEndpoint.database(context)
        case "zones/list": result = try await ZonesEndpoint.list(context)
        case "zones/lookup": result = try await ZonesEndpoint.lookUp(context)
        case "zones/modify": result = try await ZonesEndpoint.modify(context)
        case "zones/changes": result = try await ZonesEndpoint.changes(context)
        case "subscriptions/list": result = await SubscriptionsEndpoint.list(context)
        case "subscriptions/lookup": result = try await SubscriptionsEndpoint.lookUp(context)
        case "subscriptions/modify": result = try await SubscriptionsEndpoint.modify(context)
        case "assets/upload": result = try AssetsEndpoint.uploadURLs(context)
        case "users/caller": result = try UsersEndpoint.caller(context)
        case "users/current": result = try UsersEndpoint.current(context)
        case "users/discover": result = try UsersEndpoint.discover(context)
        case "users/lookup/email": result = try UsersEndpoint.lookUpByEmail(context)
        case "users/lookup/id": result = try UsersEndpoint.lookUpByID(context)
        case "records/resolve": result = try await SharesEndpoint.resolve(context)
        case "records/accept": result = try await SharesEndpoint.accept(context)
        default:
            throw ServerError(
                .notFound,
                "no endpoint \(endpoint) in the \(scope.rawValue) database; FIDELITY.md lists what the emulator serves")
        }
        return .json(result)
    }

    /// `tokens/create` and `tokens/register`: a notification URL for the signed-in user.
    private func tokens(
        _ endpoint: String, body: JSONValue, request: EmulatorRequest, container: String,
        environment: EmulatorEnvironment, caller: Caller
    ) async throws(ServerError) -> JSONValue {
        guard let user = caller.userName else {
            throw state.authenticationRequired(request, reason: "notification tokens belong to a signed-in user")
        }
        let apnsEnvironment = body["apnsEnvironment"]?.string ?? "development"
        switch endpoint {
        case "tokens/create":
            let token = await state.notifications.createToken(
                user: user, container: container, environment: environment)
            return [
                "apnsEnvironment": .string(apnsEnvironment), "apnsToken": .string(token),
                "webcourierURL": .string(request.baseURL + Self.courierPrefix + token),
            ]
        case "tokens/register":
            guard let token = body["apnsToken"]?.string else { throw .badRequest("tokens/register needs an apnsToken") }
            await state.notifications.register(token, user: user, container: container, environment: environment)
            return ["apnsEnvironment": .string(apnsEnvironment), "apnsToken": .string(token)]
        default:
            throw ServerError(.notFound, "no endpoint \(endpoint): tokens/create or tokens/register")
        }
    }

    // MARK: Authentication

    private func authenticate(_ request: EmulatorRequest, scope: DatabaseKey.Scope, container: String)
        async throws(ServerError) -> Caller
    {
        if ServerToServerVerifier.isSigned(request) {
            let keyID = try state.verifier.verify(request)
            guard scope == .public else {
                throw ServerError(
                    .authenticationFailed,
                    "server-to-server keys reach the public database only; the \(scope.rawValue) database needs an API token and a user's web auth token"
                )
            }
            return .server(keyID: keyID)
        }
        guard let apiToken = request.query["ckAPIToken"], !apiToken.isEmpty else {
            throw ServerError(
                .authenticationFailed,
                "a request needs ckAPIToken (with ckWebAuthToken for a user) or a server-to-server signature")
        }
        let accepted = state.configuration.apiTokens
        guard accepted.isEmpty || accepted.contains(apiToken) else {
            throw ServerError(
                .authenticationFailed, "unknown API token: start the emulator with --api-token \(apiToken)")
        }
        if let webToken = request.query["ckWebAuthToken"] ?? request.header(Self.webAuthTokenHeader), !webToken.isEmpty
        {
            guard let (user, next) = await state.tokens.redeem(webToken) else {
                throw state.authenticationRequired(
                    request, reason: "the web auth token is used, expired or unknown: each answer carries the next one")
            }
            return .user(user, nextToken: next)
        }
        guard scope == .public else {
            throw state.authenticationRequired(request, reason: "the \(scope.rawValue) database needs a signed-in user")
        }
        return .anonymous
    }
}
