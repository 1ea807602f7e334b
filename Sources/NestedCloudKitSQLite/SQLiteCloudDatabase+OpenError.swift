import Foundation

extension SQLiteCloudDatabase {
    /// Why a database file couldn't be opened. The file is never changed when opening fails.
    public enum OpenError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The file exists but isn't a SQLite database (or is damaged beyond reading).
        case notADatabase(path: String)
        /// The file is a SQLite database that some other program made; it is left untouched.
        case foreignDatabase(path: String)
        /// The file was written by a newer version of this library, with a schema this version doesn't know.
        case unsupportedSchemaVersion(path: String, found: Int, supported: Int)
        /// SQLite couldn't open the file, for example because its folder doesn't exist or isn't writable.
        case cannotOpen(path: String, reason: String)

        /// What went wrong and what to do about it.
        public var description: String {
            switch self {
            case .notADatabase(let path):
                "\(path) isn't a SQLite database, or is damaged: move it away or choose another path"
            case .foreignDatabase(let path):
                "\(path) is a SQLite database of another program; it was left untouched: choose another path"
            case .unsupportedSchemaVersion(let path, let found, let supported):
                "\(path) has schema version \(found), newer than this library's \(supported): update the library"
            case .cannotOpen(let path, let reason):
                "\(path) can't be opened: \(reason)"
            }
        }
    }
}
