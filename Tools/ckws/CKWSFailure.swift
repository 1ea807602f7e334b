import Foundation

/// A failure the user has to act on, said in full: ArgumentParser prints the description after `Error: `.
enum CKWSFailure: Error, CustomStringConvertible {
    /// CloudKit wants a signed-in user (`AUTHENTICATION_REQUIRED`), and said where to sign in, or didn't.
    case signInNeeded(at: URL?)
    /// A new web auth token couldn't be written to the token file; the old one no longer works.
    case webAuthTokenNotStored(path: String, reason: String, token: String)

    var description: String {
        switch self {
        case .signInNeeded(let url?):
            "CloudKit needs a signed-in user. Sign in at \(url.absoluteString) and run ckws again with the web auth "
                + "token the sign-in gives (--web-auth-token, or --web-auth-token-file)."
        case .signInNeeded(nil):
            "CloudKit needs a signed-in user, and didn't say where to sign in. Give a signed-in user's web auth token "
                + "(--web-auth-token, or --web-auth-token-file) with the API token."
        case .webAuthTokenNotStored(let path, let reason, let token):
            // The token is printed only here: CloudKit has retired the one in the file, so without this the user
            // would have to sign in again.
            "The new web auth token couldn't be written to \(path) (\(reason)), and CloudKit no longer accepts the "
                + "old one. Store this one yourself to keep the session:\n\(token)"
        }
    }
}
