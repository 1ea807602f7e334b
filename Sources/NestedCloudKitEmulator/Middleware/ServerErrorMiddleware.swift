import Foundation
import HTTPTypes
import Hummingbird

/// Answers every error as CloudKit does, with its error dictionary, and marks every answer: `nosniff`, and a
/// request UUID as CloudKit's answers carry.
struct ServerErrorMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = Self.response(
                for: error, method: request.method.rawValue,
                path: EmulatorRequest.canonicalPath(request.uri.path), notes: context.notes)
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        if let requestUUID = Self.requestUUID { response.headers[requestUUID] = UUID().uuidString.lowercased() }
        return response
    }

    /// CloudKit's header naming each answer; a valid field name, so never `nil`.
    static let requestUUID = HTTPField.Name("X-Apple-Request-UUID")

    /// The answer for an error, noted for the request log.
    static func response(for error: any Error, method: String, path: String, notes: ExchangeNotes) -> Response {
        let serverError: ServerError =
            switch error {
            case let error as ServerError: error
            case let error as HTTPError where error.status == .notFound: .noRoute(method: method, path: path)
            case let error as HTTPError:
                ServerError(.badRequest, error.body ?? error.status.reasonPhrase, status: error.status.code)
            default: ServerError(.internalError, FilePaths.removed(from: "\(error)"))
            }
        notes.serverErrorCode = serverError.code.rawValue
        return EmulatorResponse.error(serverError).httpResponse
    }
}

extension ServerError {
    /// No route answers the path: what the emulator serves there instead.
    static func noRoute(method: String, path: String) -> ServerError {
        if path.hasPrefix(EmulatorRouter.adminPrefix) {
            return ServerError(
                .notFound,
                "no admin route \(method) \(path): health, reset, sign-in, databases, shares, records, requests, faults, clock, schema, export, import, fidelity"
            )
        }
        if path.hasPrefix("/database/") || path.hasPrefix("/device/") {
            return ServerError(
                .notFound,
                "no endpoint \(method) \(path): CloudKit's paths are /database/1/CONTAINER/ENVIRONMENT/DATABASE/ENTITY/ACTION, and FIDELITY.md lists what the emulator serves"
            )
        }
        return ServerError(
            .notFound, "no endpoint at \(path): CloudKit's paths start /database/1/CONTAINER/ENVIRONMENT/")
    }
}
