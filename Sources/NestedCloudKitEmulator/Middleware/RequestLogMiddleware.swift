import Foundation
import Hummingbird

/// Keeps each answered request in the emulator's request log, for the dashboard and for tests that check what a
/// client sent: the outermost middleware, so that it times and sees the answer every other one gave.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let state: EmulatorState

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let start = ContinuousClock.now
        let path = EmulatorRequest.canonicalPath(request.uri.path)
        let method = request.method.rawValue
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            // The error middleware answers every error; one that gets past it is still a request that was made.
            log(method: method, path: path, status: 500, since: start, notes: context.notes)
            throw error
        }
        log(method: method, path: path, status: response.status.code, since: start, notes: context.notes)
        return response
    }

    private func log(
        method: String, path: String, status: Int, since start: ContinuousClock.Instant, notes: ExchangeNotes
    ) {
        guard isLogged(method: method, path: path) else { return }
        let elapsed = ContinuousClock.now - start
        state.log.append(
            RequestLog.Entry(
                time: state.clock.now(), method: method, path: Self.loggedPath(path), status: status,
                durationMilliseconds: Double(elapsed.components.attoseconds) / 1e15
                    + Double(elapsed.components.seconds) * 1000,
                user: notes.user, serverErrorCode: notes.serverErrorCode))
    }

    /// Whether the log keeps a request: not the dashboard page, the log itself, nor (unless configured) the admin
    /// API's reads, which the dashboard polls every two seconds.
    private func isLogged(method: String, path: String) -> Bool {
        let admin = EmulatorRouter.adminPrefix
        if path == "/" || path == "/index.html" || path.hasPrefix(admin + "requests") { return false }
        if path.hasPrefix(admin), ["GET", "HEAD", "OPTIONS"].contains(method) {
            return state.configuration.logsAdminReads
        }
        return true
    }

    /// The path as the log shows it: a notification, upload, download or share URL's token is its credential, so
    /// it is left out.
    static func loggedPath(_ path: String) -> String {
        let tokenPrefixes = [
            EmulatorRouter.courierPrefix, AssetsEndpoint.uploadPrefix, AssetsEndpoint.downloadPrefix, SharePage.prefix,
        ]
        for prefix in tokenPrefixes where path.hasPrefix(prefix) {
            return prefix + "(token)"
        }
        return path
    }
}
