import Foundation
import HTTPTypes
import Hummingbird

/// The emulator's routes, and the middleware every request passes through, outermost first:
///
/// 1. ``RequestLogMiddleware`` times and logs each answer;
/// 2. ``CrossOriginMiddleware`` lets pages of any origin read the answers of CloudKit's paths;
/// 3. ``ServerErrorMiddleware`` answers every error in CloudKit's words;
/// 4. ``HostCheckMiddleware`` refuses a `Host` that isn't the emulator's;
/// 5. ``RequestBodyMiddleware`` reads the body, or refuses one too large;
/// 6. ``PreflightMiddleware`` answers browsers' `OPTIONS`.
///
/// Then the admin API (behind ``AdminAccessMiddleware``), CloudKit's database paths (behind
/// ``AuthenticationMiddleware`` and ``FaultMiddleware``), and the pages and URLs the emulator hands out.
enum EmulatorRouter {
    static let adminPrefix = "/emulator/v1/"
    static let courierPrefix = "/emulator/courier/"

    static func make(state: EmulatorState) -> Router<EmulatorRequestContext> {
        // HEAD wherever GET is answered (a download URL, the dashboard), as a web server does.
        let router = Router(context: EmulatorRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: RequestLogMiddleware(state: state))
        router.add(middleware: CrossOriginMiddleware())
        router.add(middleware: ServerErrorMiddleware())
        router.add(middleware: HostCheckMiddleware(state: state))
        router.add(middleware: RequestBodyMiddleware(maximumBodySize: state.configuration.maximumRequestBodySize))
        router.add(middleware: PreflightMiddleware(state: state))

        AdminAPI(state: state).register(
            on: router.group("emulator/v1").add(middleware: AdminAccessMiddleware(state: state)))
        for root in ["database", "device"] {
            DatabaseRoutes(state: state).register(
                on: router.group("\(root)/1/:container/:environment")
                    .add(middleware: AuthenticationMiddleware(state: state))
                    .add(middleware: FaultMiddleware(state: state)))
        }
        registerPages(on: router, state: state)
        return router
    }

    /// The dashboard, the sign-in page, and the upload, download, notification and share URLs.
    private static func registerPages(on router: Router<EmulatorRequestContext>, state: EmulatorState) {
        for path: RouterPath in ["/", "index.html"] {
            router.answer(.get, path) { _ throws(ServerError) in .html(DashboardPage.html) }
        }
        for method: HTTPRequest.Method in [.get, .post] {
            router.answer(method, "emulator/sign-in") { context throws(ServerError) in
                try await SignInPage.respond(to: context.request, state: state)
            }
            router.answer(method, "emulator/courier/:token") { context throws(ServerError) in
                try await NotificationsEndpoint.poll(context.decodedParameter("token"), state: state)
            }
        }
        router.answer(.post, "emulator/upload/:id") { context throws(ServerError) in
            .json(try AssetsEndpoint.upload(context.request, id: context.decodedParameter("id"), state: state))
        }
        // A download URL ends with a file name of the client's choosing (`${f}`).
        for path: RouterPath in ["emulator/download/:token", "emulator/download/:token/**"] {
            router.answer(.get, path) { context throws(ServerError) in
                try await AssetsEndpoint.download(context.decodedParameter("token"), state: state)
            }
        }
        router.answer(.get, "share/:shortGUID") { context throws(ServerError) in
            try await SharePage.respond(shortGUID: context.decodedParameter("shortGUID"), state: state)
        }
    }
}

extension RouterMethods where Context == EmulatorRequestContext {
    /// Answers `method` at `path` with a handler of the emulator's, which throws only errors in CloudKit's words.
    @discardableResult
    func answer(
        _ method: HTTPRequest.Method, _ path: RouterPath,
        with handler: @escaping @Sendable (EmulatorRequestContext) async throws(ServerError) -> EmulatorResponse
    ) -> Self {
        on(path, method: method) { _, context in try await handler(context) }
    }
}

extension EmulatorRequestContext {
    /// A parameter of the route's path, percent-decoded (empty if the route has none of that name).
    func decodedParameter(_ name: String) -> String {
        optionalParameter(name) ?? ""
    }

    /// A parameter of the route's path, percent-decoded, or `nil` if the route has none of that name.
    func optionalParameter(_ name: String) -> String? {
        parameters.get(name).map { $0.removingPercentEncoding ?? $0 }
    }
}
