import Foundation

/// One of the emulator's databases: CloudKit keeps a public database per container and environment, and a
/// private and a shared database per user.
package struct DatabaseKey: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The database's scope, as the path names it.
    package enum Scope: String, Sendable, Hashable, Codable, CaseIterable {
        /// The container's public database, one per environment.
        case `public`
        /// A user's private database.
        case `private`
        /// The zones other users shared with a user.
        case shared

        /// `CKDatabase.Scope`'s raw value, which notifications carry as `dbs`.
        var notificationValue: Int64 {
            switch self {
            case .public: 1
            case .private: 2
            case .shared: 3
            }
        }
    }

    /// The container identifier, as the path names it (any name works).
    package var container: String
    /// The environment, development or production.
    package var environment: EmulatorEnvironment
    /// Public, private or shared.
    package var scope: Scope
    /// The owner of a private or shared database; `nil` for the public one.
    package var user: String?

    /// A database of a container; `user` is ignored for the public database, which no user owns.
    package init(container: String, environment: EmulatorEnvironment, scope: Scope, user: String? = nil) {
        self.container = container
        self.environment = environment
        self.scope = scope
        self.user = scope == .public ? nil : user
    }

    /// `iCloud.com.example.app/development/private of alice`.
    package var description: String {
        "\(container)/\(environment.rawValue)/\(scope.rawValue)" + (user.map { " of \($0)" } ?? "")
    }

    /// The file the database lives in under a data directory: one folder per container and environment.
    func fileName(in directory: URL) -> URL {
        let folder = directory.appendingPathComponent(Self.safe(container)).appendingPathComponent(environment.rawValue)
        let name = scope.rawValue + (user.map { "-" + Self.safe($0) } ?? "")
        return folder.appendingPathComponent(name + ".sqlite")
    }

    /// A name made safe for a file: anything but letters, digits, `.`, `_` and `-` percent-encoded, so that two
    /// different names never share a file.
    static func safe(_ name: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "._-")
        let encoded = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
        return encoded.hasPrefix(".") ? "%2E" + encoded.dropFirst() : encoded
    }

    /// The inverse of ``safe(_:)``, for the names of files found at startup.
    static func unsafe(_ name: String) -> String {
        name.removingPercentEncoding ?? name
    }
}
