import Foundation

extension SQLiteCloudDatabase {
    /// Why a database file couldn't be opened. The file is never changed when opening fails.
    ///
    /// Match an error by its ``code`` (a later release may add codes, so a `switch` over it needs a `default`), or
    /// compare it with a value. ``path`` names the file, and ``underlyingError`` holds SQLite's or the file
    /// system's error, when there is one.
    public struct OpenError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What kind of failure an error is.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            /// The code's name.
            public let description: String

            private init(_ name: String) { description = name }

            /// See ``OpenError/notADatabase(path:)``.
            public static let notADatabase = Code("notADatabase")
            /// See ``OpenError/foreignDatabase(path:)``.
            public static let foreignDatabase = Code("foreignDatabase")
            /// See ``OpenError/unsupportedSchemaVersion(path:found:supported:)``.
            public static let unsupportedSchemaVersion = Code("unsupportedSchemaVersion")
            /// See ``OpenError/cannotOpen(path:reason:)``.
            public static let cannotOpen = Code("cannotOpen")
        }

        /// What the error is. Private, so that a new kind breaks no app's `switch`.
        private enum Kind: Sendable, Hashable {
            case notADatabase
            case foreignDatabase
            case unsupportedSchemaVersion(found: Int, supported: Int)
            case cannotOpen(reason: String)
        }

        private let kind: Kind
        /// The file, or the server's directory, that couldn't be opened.
        public let path: String
        /// SQLite's or the file system's error, for ``Code/cannotOpen``. Two errors that differ only in it are
        /// equal.
        public let underlyingError: (any Error)?

        private init(_ kind: Kind, path: String, underlying: (any Error)? = nil) {
            self.kind = kind
            self.path = path
            underlyingError = underlying
        }

        /// The file exists but isn't a SQLite database (or is damaged beyond reading).
        public static func notADatabase(path: String) -> OpenError { OpenError(.notADatabase, path: path) }

        /// The file is a SQLite database that some other program made; it is left untouched.
        public static func foreignDatabase(path: String) -> OpenError { OpenError(.foreignDatabase, path: path) }

        /// The file was written by a newer version of this library, with a schema this version doesn't know.
        public static func unsupportedSchemaVersion(path: String, found: Int, supported: Int) -> OpenError {
            OpenError(.unsupportedSchemaVersion(found: found, supported: supported), path: path)
        }

        /// SQLite couldn't open the file, for example because its folder doesn't exist or isn't writable.
        public static func cannotOpen(path: String, reason: String) -> OpenError {
            OpenError(.cannotOpen(reason: reason), path: path)
        }

        /// SQLite couldn't open the file because of `underlying`, which the error carries.
        static func cannotOpen(path: String, underlying: any Error) -> OpenError {
            OpenError(.cannotOpen(reason: "\(underlying)"), path: path, underlying: underlying)
        }

        /// What kind of failure this is.
        public var code: Code {
            switch kind {
            case .notADatabase: .notADatabase
            case .foreignDatabase: .foreignDatabase
            case .unsupportedSchemaVersion: .unsupportedSchemaVersion
            case .cannotOpen: .cannotOpen
            }
        }

        /// Why SQLite couldn't open the file, for ``Code/cannotOpen``.
        public var reason: String? {
            if case .cannotOpen(let reason) = kind { return reason }
            return nil
        }

        /// The schema version the file has and the newest this library reads, for ``Code/unsupportedSchemaVersion``.
        public var schemaVersions: (found: Int, supported: Int)? {
            if case .unsupportedSchemaVersion(let found, let supported) = kind { return (found, supported) }
            return nil
        }

        /// What went wrong and what to do about it.
        public var description: String {
            switch kind {
            case .notADatabase:
                "\(path) isn't a SQLite database, or is damaged: move it away or choose another path"
            case .foreignDatabase:
                "\(path) is a SQLite database of another program; it was left untouched: choose another path"
            case .unsupportedSchemaVersion(let found, let supported):
                "\(path) has schema version \(found), newer than this library's \(supported): update the library"
            case .cannotOpen(let reason):
                "\(path) can't be opened: \(reason)"
            }
        }

        /// Whether two errors are the same failure of the same file; their ``underlyingError``s aren't compared.
        public static func == (lhs: OpenError, rhs: OpenError) -> Bool {
            lhs.kind == rhs.kind && lhs.path == rhs.path
        }

        /// Hashes what `==` compares.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(kind)
            hasher.combine(path)
        }
    }
}
