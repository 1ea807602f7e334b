import Foundation
import NestedCloudKitEmulator

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Raw HTTP to an emulator on loopback, for the tests that go end to end: the JSON sent and the status, headers and
/// JSON answered. Most tests drive the handler directly instead (``EmulatorRouterHarness``).
struct EmulatorHTTP {
    let emulator: CloudKitEmulator
    var container = "iCloud.com.example.EmulatorTests"

    struct Answer {
        var status: Int
        var headers: [String: String]
        var json: [String: Any]
        var body: Data

        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    func send(_ method: String, _ path: String, json: Any? = nil, body: Data? = nil) async throws -> Answer {
        guard let url = URL(string: emulator.url.absoluteString + path) else { throw URLError(.badURL) }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let json { request.httpBody = try JSONSerialization.data(withJSONObject: json) }
        if let body { request.httpBody = body }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields { headers["\(name)"] = "\(value)" }
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return Answer(status: http.statusCode, headers: headers, json: object, body: data)
    }

    /// A database request as a user of `scope`, with the user's current token (rotated by each answer).
    func database(_ scope: String, _ endpoint: String, token: String?, json: Any) async throws -> Answer {
        var path = "/database/1/\(container)/development/\(scope)/\(endpoint)?ckAPIToken=test"
        if let token {
            path += "&ckWebAuthToken=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token)
        }
        return try await send("POST", path, json: json)
    }
}
