import Foundation

/// An HTTP response from the emulator's handlers.
struct EmulatorResponse: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data
    /// Set by a fault that loses the response: the server closes the connection instead of answering, after the
    /// request took effect.
    var isLost = false
    /// The error code a failed answer carries, for the request log.
    var serverErrorCode: String?

    init(status: Int, headers: [String: String] = [:], body: Data, serverErrorCode: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.serverErrorCode = serverErrorCode
    }

    static func json(_ value: JSONValue, status: Int = 200) -> EmulatorResponse {
        EmulatorResponse(
            status: status, headers: ["Content-Type": "application/json; charset=UTF-8"], body: value.encoded())
    }

    /// A page of the emulator's own (the dashboard, the sign-in page): never shown in another site's frame, where a
    /// page could trick the developer into clicking its buttons.
    static func html(_ text: String, status: Int = 200) -> EmulatorResponse {
        EmulatorResponse(
            status: status,
            headers: [
                "Content-Type": "text/html; charset=UTF-8", "X-Frame-Options": "DENY",
                "Content-Security-Policy": "frame-ancestors 'none'", "Cache-Control": "no-store",
            ],
            body: Data(text.utf8))
    }

    static func error(_ error: ServerError) -> EmulatorResponse {
        var response = json(error.json, status: error.httpStatus)
        response.serverErrorCode = error.code.rawValue
        return response
    }
}
