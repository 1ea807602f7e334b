import HTTPTypes
import Hummingbird

/// The headers CloudKit exposes to browsers, so that CloudKit JS can read the rotated web auth token.
///
/// Only CloudKit's own paths and the URLs they hand out (uploads, downloads, notifications) carry them, on every
/// answer, errors included: CloudKit JS calls those from the app's page, while the admin API, the dashboard and the
/// sign-in page answer no other origin.
struct CrossOriginMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext

    static let headers: [(HTTPField.Name, String)] = [
        (.accessControlAllowOrigin, "*"),
        (.accessControlAllowMethods, "GET, POST, DELETE, OPTIONS"),
        (
            .accessControlAllowHeaders,
            "Content-Type, X-Apple-CloudKit-Request-KeyID, X-Apple-CloudKit-Request-ISO8601Date, "
                + "X-Apple-CloudKit-Request-SignatureV1, X-Apple-CloudKit-Web-Auth-Token"
        ),
        (
            .accessControlExposeHeaders,
            "X-Apple-Request-UUID, X-Apple-CloudKit-Web-Auth-Token, X-Responding-Instance, Via"
        ),
    ]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var response = try await next(request, context)
        let path = EmulatorRequest.canonicalPath(request.uri.path)
        if Self.isCrossOrigin(path) {
            for (name, value) in Self.headers { response.headers[name] = value }
        }
        return response
    }

    /// Whether a path answers pages of any origin, as CloudKit's do: the database and device paths, and the
    /// upload, download and notification URLs they hand out (whose tokens are their credentials).
    static func isCrossOrigin(_ path: String) -> Bool {
        path.hasPrefix("/database/") || path.hasPrefix("/device/") || path.hasPrefix(AssetsEndpoint.uploadPrefix)
            || path.hasPrefix(AssetsEndpoint.downloadPrefix) || path.hasPrefix(EmulatorRouter.courierPrefix)
    }
}
