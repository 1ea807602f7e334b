import HTTPTypes
import Hummingbird

/// CloudKit's database endpoints, under `/database/1/CONTAINER/ENVIRONMENT/`: `DATABASE/ENTITY/ACTION`, and the
/// notification token paths, with and without a database.
struct DatabaseRoutes: Sendable {
    let state: EmulatorState

    typealias Endpoint = @Sendable (DatabaseRequest) async throws(ServerError) -> JSONValue

    /// Every endpoint of a database, by the path after the database's name.
    static let endpoints: [(path: String, answer: Endpoint)] = [
        ("records/modify", RecordsEndpoint.modify),
        ("records/lookup", RecordsEndpoint.lookUp),
        ("records/query", QueryEndpoint.query),
        ("records/changes", ChangesEndpoint.records),
        ("records/resolve", SharesEndpoint.resolve),
        ("records/accept", SharesEndpoint.accept),
        ("changes/zone", ChangesEndpoint.zones),
        ("changes/database", ChangesEndpoint.database),
        ("zones/list", ZonesEndpoint.list),
        ("zones/lookup", ZonesEndpoint.lookUp),
        ("zones/modify", ZonesEndpoint.modify),
        ("zones/changes", ZonesEndpoint.changes),
        ("subscriptions/list", SubscriptionsEndpoint.list),
        ("subscriptions/lookup", SubscriptionsEndpoint.lookUp),
        ("subscriptions/modify", SubscriptionsEndpoint.modify),
        ("assets/upload", AssetsEndpoint.uploadURLs),
        ("users/caller", UsersEndpoint.caller),
        ("users/current", UsersEndpoint.current),
        ("users/discover", UsersEndpoint.discover),
        ("users/lookup/email", UsersEndpoint.lookUpByEmail),
        ("users/lookup/id", UsersEndpoint.lookUpByID),
    ]

    /// CloudKit documents each endpoint as a GET or a POST; clients send either.
    private static let methods: [HTTPRequest.Method] = [.get, .post]

    func register(on group: RouterGroup<EmulatorRequestContext>) {
        let state = self.state
        for method in Self.methods {
            for endpoint in Self.endpoints {
                group.answer(method, RouterPath(":database/" + endpoint.path)) { context throws(ServerError) in
                    .json(try await endpoint.answer(Self.databaseRequest(context, state: state)))
                }
            }
            for prefix in ["", ":database/"] {
                group.answer(method, RouterPath(prefix + "tokens/create")) { context throws(ServerError) in
                    .json(
                        try await NotificationsEndpoint.create(
                            context.request, call: try Self.call(context), state: state))
                }
                group.answer(method, RouterPath(prefix + "tokens/register")) { context throws(ServerError) in
                    .json(
                        try await NotificationsEndpoint.register(
                            context.request, call: try Self.call(context), state: state))
                }
            }
        }
    }

    /// The database the path names, opened for the caller, with the request's body read as JSON.
    private static func databaseRequest(_ context: EmulatorRequestContext, state: EmulatorState)
        async throws(ServerError) -> DatabaseRequest
    {
        let call = try call(context)
        let body = try context.request.jsonBody()
        let key = DatabaseKey(
            container: call.container, environment: call.environment, scope: call.scope, user: call.caller.userName)
        let handle = try await state.registry.handle(for: key)
        return DatabaseRequest(
            request: context.request, body: body, handle: handle, caller: call.caller,
            coding: state.coding(for: handle, baseURL: context.request.baseURL), state: state)
    }

    private static func call(_ context: EmulatorRequestContext) throws(ServerError) -> DatabaseCall {
        guard let call = context.database else {
            // Every database route is registered behind the authentication middleware, which sets the call.
            throw ServerError(.internalError, "the request reached a database endpoint unauthenticated")
        }
        return call
    }
}
