import Foundation
import NestedCloudKitCodable

/// The file that keeps the user's web auth token between runs, rewritten with each new token CloudKit gives.
///
/// CloudKit retires a token as soon as it gives the next one, so a new token that can't be written must not be
/// dropped: the failure is kept, with the token, for ``ConnectionOptions/withDatabase(environment:_:)`` to report.
final class WebAuthTokenFile: Sendable {
    let url: URL
    private let storedFailure = Locked<CKWSFailure?>(nil)

    init(path: String) {
        url = URL(fileURLWithPath: path)
    }

    /// Why the last new token couldn't be written, with the token; `nil` when every one was.
    var failure: CKWSFailure? {
        storedFailure.withLock { $0 }
    }

    /// Writes the token in place of the old one.
    func store(_ token: String) {
        do {
            // Atomically, so an interrupted run leaves the old token or the new one, never half of one.
            try Data(token.utf8).write(to: url, options: .atomic)
            storedFailure.withLock { $0 = nil }
        } catch {
            let reason = (error as NSError).localizedDescription
            storedFailure.withLock {
                $0 = .webAuthTokenNotStored(path: url.path, reason: reason, token: token)
            }
        }
    }
}
