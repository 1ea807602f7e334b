import Foundation

/// An HTTP request as the emulator's handlers see it: independent of the server library, so that the handlers can
/// be driven directly and the server stays a thin adapter.
struct EmulatorRequest: Sendable {
    var method: String
    /// The path, percent-decoded, without the query.
    var path: String
    /// The path and query exactly as sent: what CloudKit JS signs.
    var rawTarget: String
    /// The path exactly as sent, still percent-encoded: what Apple's documentation signs.
    var rawPath: String
    var query: [String: String]
    /// Header values by lowercased name.
    var headers: [String: String]
    var body: Data
    /// Set when the body was larger than the emulator reads: `body` is then empty, and the answer is a 413.
    var bodyWasTooLarge = false
    /// Where the client reached the emulator, for the URLs the emulator hands out (uploads, downloads, the
    /// notification URL, the sign-in page). Set by the handler from the `Host` header once it has checked that
    /// header names the emulator, so that no URL is ever built from a host a DNS-rebinding page chose.
    var baseURL = ""

    /// A request for `target` (the path and query as sent), with header names in any case.
    init(method: String, target: String, headers: [String: String] = [:], body: Data = Data()) {
        self.method = method
        rawTarget = target
        let components = URLComponents(string: target)
        let rawPath = components?.percentEncodedPath ?? String(target.prefix { $0 != "?" })
        self.rawPath = rawPath
        path = rawPath.removingPercentEncoding ?? rawPath
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        self.query = query
        var lowercased: [String: String] = [:]
        for (name, value) in headers { lowercased[name.lowercased()] = value }
        self.headers = lowercased
        self.body = body
    }

    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

extension EmulatorRequest {
    /// A path as the routes match it: percent-decoded, and repeated slashes as one, since Hummingbird's router skips
    /// empty segments. Every check of a path (the log's masking of tokens, CORS, the admin API's access) reads this
    /// form, so that `/emulator//courier/TOKEN` is masked as the route that answers it is.
    static func canonicalPath(_ raw: String) -> String {
        let decoded = raw.removingPercentEncoding ?? raw
        var path = "/" + decoded.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        if decoded.hasSuffix("/"), path != "/" { path += "/" }
        return path
    }

    /// The body read as JSON; an empty body is an empty object.
    func jsonBody() throws(ServerError) -> JSONValue {
        do {
            return try JSONValue.parse(body)
        } catch {
            throw .badRequest("the body isn't JSON: \(error)")
        }
    }
}
