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

    func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// Where the client reached the emulator, for the URLs the emulator hands out (uploads, downloads, the
    /// notification URL, the sign-in page).
    var baseURL: String {
        "http://" + (header("host") ?? "127.0.0.1")
    }
}
