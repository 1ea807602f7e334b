import Foundation
import HTTPTypes
import Hummingbird

/// Applies the faults a test set (``EmulatorFault``) to the database requests they match: a wait, an error in
/// CloudKit's words, or an answer lost after the request took effect.
struct FaultMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let state: EmulatorState

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let fault = state.faults.take(for: context.request) else { return try await next(request, context) }
        if fault.latencyMilliseconds > 0 {
            try? await Task.sleep(for: .milliseconds(Int(fault.latencyMilliseconds)))
        }
        if let code = fault.serverErrorCode.flatMap(ServerError.Code.init(rawValue:)) {
            throw ServerError(code, "injected by emulator fault \(fault.id)", retryAfter: fault.retryAfter)
        }
        let response = try await next(request, context)
        guard fault.loseResponse else { return response }
        // The request took effect; the connection closes before the answer, as when a network drops it.
        var lost = response
        lost.headers[.contentLength] = String((response.body.contentLength ?? 0) + 1)
        lost.body = ResponseBody(contentLength: (response.body.contentLength ?? 0) + 1) { _ in throw LostResponse() }
        return lost
    }

    struct LostResponse: Error {}
}
