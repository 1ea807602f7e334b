import Foundation

/// Which `Host` headers and web origins the emulator trusts.
///
/// The emulator listens on loopback, next to the developer's browser. A web page can't read another origin's
/// answers, but it can send requests, and with DNS rebinding it can make its own name resolve to 127.0.0.1: its
/// requests then reach the emulator as same-origin, with the page's name in `Host`. So a request must name the
/// emulator in `Host` (a loopback name or the address it was bound to, with its port), the admin API answers only
/// the emulator's own pages, and the sign-in page hands tokens only to loopback origins and those configured.
struct RequestOrigins: Sendable {
    /// The names a request may reach the emulator by, lowercased, IPv6 addresses in brackets.
    let hostNames: [String]
    let port: Int
    /// Origins configured besides loopback ones, normalized (`scheme://host[:port]`, lowercased).
    let allowedOrigins: Set<String>

    static let loopbackNames = ["127.0.0.1", "localhost", "[::1]"]

    init(configuration: EmulatorConfiguration, port: Int) {
        var names = Self.loopbackNames
        // The bound address too, which ``CloudKitEmulator/url`` names. (Bound to 0.0.0.0, the machine's other
        // addresses reach the emulator, but only these names are answered.)
        let bound = configuration.urlHost.lowercased()
        if !names.contains(bound) { names.append(bound) }
        hostNames = names
        self.port = port
        allowedOrigins = Set(configuration.allowedOrigins.compactMap { Self.origin(of: $0)?.serialized })
    }

    // MARK: Host

    /// The `Host` header's value if it names the emulator, for the URLs the emulator builds; throws otherwise.
    /// A request without one (HTTP/1.0, a test's bare socket) gets the emulator's first name: no browser sends it.
    func checkedHost(_ header: String?) throws(ServerError) -> String {
        let canonical = hostNames[0] + ":\(port)"
        guard let header, !header.isEmpty else { return canonical }
        let host = header.lowercased()
        let accepted = hostNames.flatMap { name in port == 80 ? [name + ":80", name] : [name + ":\(port)"] }
        guard accepted.contains(host) else {
            let names = hostNames.map { $0 + ":\(port)" }
            throw ServerError(
                .accessDenied,
                "this emulator answers requests for \(Self.list(names)), not \(header): reach it by one of those names (a page on another name may be a DNS-rebinding attack)"
            )
        }
        return host
    }

    // MARK: Origins

    /// An origin, `scheme://host[:port]`, parsed from an `Origin` header or any URL.
    struct Origin: Hashable, Sendable {
        var scheme: String
        /// Lowercased; an IPv6 address in brackets.
        var host: String
        var port: Int?

        /// The port a URL of this scheme has when it names none.
        var effectivePort: Int? { port ?? (scheme == "http" ? 80 : scheme == "https" ? 443 : nil) }

        /// As an `Origin` header writes it, the default port left out.
        var serialized: String {
            let defaultPort = scheme == "http" ? 80 : 443
            return "\(scheme)://\(host)" + (port.map { $0 == defaultPort ? "" : ":\($0)" } ?? "")
        }
    }

    /// The origin of an http or https URL, or `nil` (another scheme, no host, not a URL).
    static func origin(of text: String) -> Origin? {
        guard let components = URLComponents(string: text.trimmingCharacters(in: .whitespaces)),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return Origin(scheme: scheme, host: bracketed, port: components.port)
    }

    /// Whether `origin` (an `Origin` header) is one of the emulator's own pages: http, a name of the emulator, its
    /// port.
    func isEmulator(_ origin: String) -> Bool {
        guard let parsed = Self.origin(of: origin), parsed.scheme == "http" else { return false }
        return hostNames.contains(parsed.host) && parsed.effectivePort == port
    }

    /// Whether the sign-in page may hand a web auth token to a page of this origin: a loopback origin (any port, http
    /// or https) or one configured with `--allowed-origin`.
    func isAllowedApp(_ origin: Origin) -> Bool {
        Self.loopbackNames.contains(origin.host) || allowedOrigins.contains(origin.serialized)
    }

    /// The emulator's own origin, as the admin API's refusals name it.
    var emulatorOrigin: String { "http://\(hostNames[0]):\(port)" }

    private static func list(_ names: [String]) -> String {
        names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
    }
}
