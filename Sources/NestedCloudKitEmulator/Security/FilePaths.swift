import Foundation

/// Takes file paths out of error messages: the emulator's answers go to any client, and a path says where the
/// developer keeps their data (and their user name, in a home directory).
enum FilePaths {
    /// An absolute path of two components or more, or a file URL, not inside a word or a URL: `records/modify` and
    /// `http://127.0.0.1:8080/emulator/sign-in` stay as they are.
    private static let pattern = try? NSRegularExpression(
        pattern: #"(?<![\w.:/%-])(?:file://)?/(?:[^/\s"'<>|,;(){}\[\]]+/)+[^/\s"'<>|,;(){}\[\]]*"#)

    /// `text` with each file path in it replaced by `(a file)`.
    static func removed(from text: String) -> String {
        guard let pattern, text.contains("/") else { return text }
        let range = NSRange(text.startIndex..., in: text)
        return pattern.stringByReplacingMatches(in: text, range: range, withTemplate: "(a file)")
    }
}
