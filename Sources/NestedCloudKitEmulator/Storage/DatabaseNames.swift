import Foundation

/// The names a database key is made of, checked before they reach a file name: a container identifier from a
/// request's path, a test user's name from a sign-in.
///
/// Both become folder and file names under a data directory, so they are short, ASCII and free of separators; and
/// the same rules hold in memory, so that a test passes or fails alike with either storage.
enum DatabaseNames {
    static let maximumContainerLength = 200
    static let maximumUserLength = 64

    static let containerRule =
        "the container identifier must be 1 to \(maximumContainerLength) ASCII letters, digits, '.', '-' and '_', starting with a letter or digit, as iCloud.com.example.App"
    static let userRule =
        "a test user's name must be 1 to \(maximumUserLength) ASCII letters, digits, '.', '-', '_', '@' and '+', starting with a letter or digit, as alice or alice@example.com"

    /// Refuses a container identifier that isn't one.
    static func check(container: String) throws(ServerError) {
        guard isValid(container, maximumLength: maximumContainerLength, punctuation: "._-") else {
            throw .badRequest(containerRule)
        }
    }

    /// Refuses a test user's name that isn't one.
    static func check(user: String) throws(ServerError) {
        guard isValid(user, maximumLength: maximumUserLength, punctuation: "._-@+") else {
            throw .badRequest(userRule)
        }
    }

    /// Refuses a key whose container or user isn't valid.
    static func check(_ key: DatabaseKey) throws(ServerError) {
        try check(container: key.container)
        if let user = key.user { try check(user: user) }
    }

    private static func isValid(_ name: String, maximumLength: Int, punctuation: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maximumLength, isLetterOrDigit(first) else { return false }
        let allowed = Set(punctuation.utf8)
        return bytes.allSatisfy { isLetterOrDigit($0) || allowed.contains($0) }
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }
}
