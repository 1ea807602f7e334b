import Foundation

/// The notification URLs: `tokens/create` and `tokens/register` hand one to a signed-in user, and the courier's
/// long poll answers with the next notification for it.
enum NotificationsEndpoint {
    /// The next notification for a notification URL's token, or the courier's keepalive: an empty answer, after
    /// which the client polls again.
    static func poll(_ token: String, state: EmulatorState) async throws(ServerError) -> EmulatorResponse {
        guard await state.notifications.isKnown(token) else {
            throw ServerError(.notFound, "no notification URL \(token): ask tokens/create for one")
        }
        guard let payload = await state.notifications.poll(token) else {
            return EmulatorResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data())
        }
        return .json(payload)
    }

    /// `tokens/create`: a new notification URL for the signed-in user.
    static func create(_ request: EmulatorRequest, call: DatabaseCall, state: EmulatorState) async throws(ServerError)
        -> JSONValue
    {
        let user = try signedIn(request, call: call, state: state)
        let body = try request.jsonBody()
        let token = await state.notifications.createToken(
            user: user, container: call.container, environment: call.environment)
        return [
            "apnsEnvironment": .string(apnsEnvironment(body)), "apnsToken": .string(token),
            "webcourierURL": .string(request.baseURL + EmulatorRouter.courierPrefix + token),
        ]
    }

    /// `tokens/register`: a token the client already has, now the signed-in user's.
    static func register(_ request: EmulatorRequest, call: DatabaseCall, state: EmulatorState)
        async throws(ServerError) -> JSONValue
    {
        let user = try signedIn(request, call: call, state: state)
        let body = try request.jsonBody()
        guard let token = body["apnsToken"]?.string else {
            throw .badRequest("tokens/register needs an apnsToken")
        }
        await state.notifications.register(token, user: user, container: call.container, environment: call.environment)
        return ["apnsEnvironment": .string(apnsEnvironment(body)), "apnsToken": .string(token)]
    }

    private static func signedIn(_ request: EmulatorRequest, call: DatabaseCall, state: EmulatorState)
        throws(ServerError) -> String
    {
        guard let user = call.caller.userName else {
            throw state.authenticationRequired(request, reason: "notification tokens belong to a signed-in user")
        }
        return user
    }

    private static func apnsEnvironment(_ body: JSONValue) -> String {
        body["apnsEnvironment"]?.string ?? "development"
    }
}
