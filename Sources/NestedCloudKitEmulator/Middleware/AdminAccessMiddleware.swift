import Hummingbird

/// Lets into the admin API only the emulator's own pages and programs, with the admin token when the emulator has
/// one (``AdminAccess``).
struct AdminAccessMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let state: EmulatorState

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        try AdminAccess(origins: state.origins, adminToken: state.configuration.adminToken).check(context.request)
        return try await next(request, context)
    }
}
