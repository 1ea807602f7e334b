import Foundation

/// A position in a database's or a zone's history of changes: "everything up to here has been seen".
///
/// A client stores the token a change request returns and hands it back next time, to get only what changed since.
/// Tokens are opaque: each backend writes its own form (an archived `CKServerChangeToken` on Apple platforms, a
/// `syncToken` string from CloudKit Web Services, a position in the change log for the in-memory and SQLite
/// databases), and a token is only meaningful to the database, and the zone, that made it. A token the database
/// no longer honours is refused with ``CloudDatabaseError/changeTokenExpired(_:)``: start over with `nil`.
///
/// Tokens are `Codable`, so they can be stored next to the data they cover (and should be: committed in the same
/// transaction, a token never claims changes the client hasn't kept).
public struct CloudChangeToken: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The backend's own form of the token.
    public let data: Data

    /// Wraps a backend's own form of a token; databases make tokens, clients only store and return them.
    public init(data: Data) {
        self.data = data
    }

    /// A token holding a string, as CloudKit Web Services' `syncToken`.
    package init(string: String) {
        self.data = Data(string.utf8)
    }

    /// The token as a string, when it holds one (see ``init(string:)``).
    package var string: String? {
        String(data: data, encoding: .utf8)
    }

    public var description: String {
        "CloudChangeToken(\(data.count) bytes)"
    }

    // A single value, so that a stored token reads as one base64 string.
    public init(from decoder: any Decoder) throws {
        self.data = try decoder.singleValueContainer().decode(Data.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(data)
    }
}
