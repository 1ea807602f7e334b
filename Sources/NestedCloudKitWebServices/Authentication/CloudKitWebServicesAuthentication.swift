import Foundation

/// How requests to CloudKit Web Services prove who sends them.
///
/// | Method | Reaches |
/// | --- | --- |
/// | ``serverToServerKey(_:)`` | the public database, as the container's own server |
/// | ``apiToken(_:webAuthToken:)`` without a web auth token | the public database, read-only as an anonymous user |
/// | ``apiToken(_:webAuthToken:)`` with a user's web auth token | the public, private and shared databases, as that user |
///
/// The tokens and the key are secrets: this type's descriptions and mirror leave them out, so logging or dumping
/// a configuration shows none of them.
public enum CloudKitWebServicesAuthentication: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// A server-to-server key: each request is signed with the key's private half.
    case serverToServerKey(ServerToServerKey)
    /// An API token from CloudKit Console, with the web auth token of a signed-in user when the requests act for one.
    ///
    /// CloudKit gives a new web auth token with every response and the old one stops working, so the database
    /// sends one request at a time and hands each new token to the `webAuthTokenRotated` closure given to
    /// ``CloudKitWebServicesDatabase/init(configuration:httpClient:logger:webAuthTokenRotated:)``.
    case apiToken(String, webAuthToken: String?)

    /// A description without the secrets.
    public var description: String {
        switch self {
        case .serverToServerKey(let key): "server-to-server key \(key.keyID)"
        case .apiToken(_, let webAuthToken):
            "API token (redacted)" + (webAuthToken == nil ? "" : " with a web auth token (redacted)")
        }
    }

    /// A description without the secrets.
    public var debugDescription: String { description }

    /// A mirror without the secrets, so that `dump` shows none.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
