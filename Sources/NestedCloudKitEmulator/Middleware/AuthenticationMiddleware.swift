import Foundation
import HTTPTypes
import Hummingbird

/// Reads which database a CloudKit path names, and who calls it: a server-to-server key (the public database only),
/// a user's web auth token, or an API token alone (public reads). Each answer to a user carries their next token,
/// errors included, as CloudKit rotates it.
///
/// The path is `/database/1/CONTAINER/ENVIRONMENT/DATABASE/ENTITY/ACTION`, or the token paths, with and without
/// a database, under `/database/1/` and `/device/1/` (FIDELITY.md).
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let state: EmulatorState

    static let webAuthTokenHeader = "X-Apple-CloudKit-Web-Auth-Token"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var context = context
        let call = try await databaseCall(context)
        context.database = call
        context.notes.user = call.caller.userName
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = ServerErrorMiddleware.response(
                for: error, method: request.method.rawValue, path: context.request.path, notes: context.notes)
        }
        if case .user(_, let nextToken) = call.caller, let name = HTTPField.Name(Self.webAuthTokenHeader) {
            response.headers[name] = nextToken
        }
        return response
    }

    private func databaseCall(_ context: Context) async throws(ServerError) -> DatabaseCall {
        // Hummingbird matches the path still percent-encoded, so an encoded slash stays inside the container's
        // name, where it is refused.
        let container = context.decodedParameter("container")
        try DatabaseNames.check(container: container)
        let environmentName = context.decodedParameter("environment")
        guard let environment = EmulatorEnvironment(rawValue: environmentName) else {
            throw .badRequest("unknown environment \(environmentName): development or production")
        }
        guard environment == state.configuration.environment else {
            throw .badRequest(
                "this emulator serves the \(state.configuration.environment.rawValue) environment: start it with --environment \(environment.rawValue)"
            )
        }
        // The token paths may leave the database out.
        var scope = DatabaseKey.Scope.private
        if let named = context.optionalParameter("database") {
            guard let parsed = DatabaseKey.Scope(rawValue: named) else {
                throw .badRequest("unknown database \(named): public, private or shared")
            }
            scope = parsed
        }
        let caller = try await authenticate(context.request, scope: scope)
        return DatabaseCall(container: container, environment: environment, scope: scope, caller: caller)
    }

    private func authenticate(_ request: EmulatorRequest, scope: DatabaseKey.Scope) async throws(ServerError)
        -> Caller
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
