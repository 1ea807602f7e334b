import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// An HTTP response from the emulator's handlers.
struct EmulatorResponse: Sendable, ResponseGenerator {
    var status: Int
    var headers: [String: String]
    var body: Data

    init(status: Int, headers: [String: String] = [:], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
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

    /// CloudKit's error dictionary, with the status the error has.
    static func error(_ error: ServerError) -> EmulatorResponse {
        json(error.json, status: error.httpStatus)
    }

    /// The response as Hummingbird sends it.
    var httpResponse: Response {
        var fields = HTTPFields()
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
        return Response(
            status: .init(code: status), headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    func response(from request: Request, context: some RequestContext) -> Response {
        httpResponse
    }
}
