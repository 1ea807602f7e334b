import Hummingbird

/// First of all: no URL is built, and nothing answered, for a `Host` that isn't the emulator's, so that a page
/// of a DNS-rebinding attacker's name reaches nothing.
struct HostCheckMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let state: EmulatorState

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var context = context
        // HTTP/1's Host header arrives as the request's authority.
        context.baseURL = "http://" + (try state.origins.checkedHost(request.head.authority))
        return try await next(request, context)
    }
}
