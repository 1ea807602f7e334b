import Crypto
import Foundation

/// Who made a request.
enum Caller: Sendable, Equatable {
    /// A server holding a registered key: the public database only.
    case server(keyID: String)
    /// A signed-in user, with the token the answer hands on.
    case user(String, nextToken: String)
    /// An API token without a user: reads of the public database only.
    case anonymous

    var userName: String? {
        if case .user(let name, _) = self { return name }
        return nil
    }

    /// The user record name CloudKit would give: `_` and 32 hex digits, the same for a name on every run.
    static func userRecordName(for user: String) -> String {
        "_"
            + SHA256.hash(data: Data("nckc-emulator-user:\(user)".utf8)).prefix(16)
            .map { String(format: "%02x", $0) }.joined()
    }

    /// The record name that stamps what this caller creates and modifies.
    var recordName: String {
        switch self {
        case .server(let keyID): "_server_" + keyID
        case .user(let name, _): Self.userRecordName(for: name)
        case .anonymous: "_anonymous"
        }
    }
}
