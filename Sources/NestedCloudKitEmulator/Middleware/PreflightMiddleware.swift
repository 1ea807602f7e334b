import Hummingbird

/// Answers a browser's `OPTIONS` preflight: CloudKit's paths to any page (``CrossOriginMiddleware`` adds what they
/// allow), the admin API only to the callers ``AdminAccess`` lets in.
struct PreflightMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let state: EmulatorState

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.method == .options else { return try await next(request, context) }
        if context.request.path.hasPrefix(EmulatorRouter.adminPrefix) {
            try AdminAccess(origins: state.origins, adminToken: state.configuration.adminToken).check(context.request)
        }
        return Response(status: .noContent)
    }
}
