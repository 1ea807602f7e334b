import Foundation
import Hummingbird
import NIOCore

/// Reads the request as the handlers see it, body included. A body over the configured limit isn't read: the
/// answer is a 413 with CloudKit's error dictionary (Hummingbird's own would be an empty body), which the Web
/// Services client reads as a batch to split.
struct RequestBodyMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext
    let maximumBodySize: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var context = context
        var headers: [String: String] = [:]
        for field in request.headers {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { $0 + ", " + field.value } ?? field.value
        }
        if let authority = request.head.authority { headers["host"] = authority }
        var emulatorRequest = EmulatorRequest(
            method: request.method.rawValue, target: request.uri.string, headers: headers)
        // Hummingbird's path, not Foundation's reading of the target: it takes any target a client sends.
        emulatorRequest.rawPath = request.uri.path
        emulatorRequest.path = EmulatorRequest.canonicalPath(request.uri.path)
        emulatorRequest.baseURL = context.baseURL
        let declaredSize = headers["content-length"].flatMap { Int($0) } ?? 0
        guard declaredSize <= maximumBodySize else { throw tooLarge }
        do {
            let buffer = try await request.body.collect(upTo: maximumBodySize)
            emulatorRequest.body = Data(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw tooLarge
        }
        context.request = emulatorRequest
        return try await next(request, context)
    }

    /// "request too large" is what the Web Services client reads as `limitExceeded`: split the batch.
    private var tooLarge: ServerError {
        ServerError(
            .badRequest,
            "request too large: the body holds more than the \(maximumBodySize) bytes the emulator reads; split the request (CloudKit takes 200 operations and 1 MB a record), and send large values as assets",
            status: 413)
    }
}
