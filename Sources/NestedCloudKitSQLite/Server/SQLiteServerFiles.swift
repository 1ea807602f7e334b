import Foundation
import NestedCloudKitCodable

/// The files of a ``SQLiteCloudServer``, opened once each and kept open.
final class SQLiteServerFiles: @unchecked Sendable {
    private let directory: String
    private let maximumTombstones: Int
    // Guards `open` and `closed`; held only while a file is looked up or opened, never across a request.
    private let lock = NSLock()
    private var open: [SQLiteFile.ServerStamp: SQLiteFile] = [:]
    /// Set by ``closeAll()``: a closed server opens no file again, so a request still running after a reset can't
    /// make one in a folder a new server owns.
    private var closed = false

    init(directory: String, maximumTombstones: Int) {
        self.directory = directory
        self.maximumTombstones = maximumTombstones
    }

    /// A user's file, opened (and made) now if it isn't yet: at `path` if given, else under its own name in the
    /// directory.
    func file(of user: String, _ scope: CloudNotification.DatabaseScope, path: String? = nil) throws -> SQLiteFile {
        let stamp = SQLiteFile.ServerStamp(userRecordName: user, scope: scope)
        return try lock.withLock {
            if let file = open[stamp] { return file }
            guard !closed else {
                throw CloudDatabaseError.internalError("the server of \(directory) is closed: open it again")
            }
            let name = (scope == .shared ? "shared-" : "private-") + Self.safe(user) + ".sqlite"
            let file = try makeFile(
                path: path ?? URL(fileURLWithPath: directory).appendingPathComponent(name).path)
            if try file.serverStamp() != stamp { try file.stamp(stamp) }
            try file.prepareForServer()
            open[stamp] = file
            return file
        }
    }

    /// The users whose file of this scope is open: after ``openExisting()``, every user who has one.
    func users(_ scope: CloudNotification.DatabaseScope) -> [String] {
        lock.withLock { open.keys.filter { $0.scope == scope }.map(\.userRecordName).sorted() }
    }

    /// Opens the files an earlier run left, by the stamps they carry. Only the server's kind of names are looked at
    /// (`private-*.sqlite`, `shared-*.sqlite`), and a file without a stamp isn't the server's yet: other files in
    /// the directory are left alone. A file that can't be opened is skipped here, and fails its user's requests,
    /// not everyone's.
    ///
    /// - Throws: When two files carry the same user's stamp: which one is theirs can't be told, and picking one
    ///   would hide the other's records.
    func openExisting() throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names.sorted()
        where name.hasSuffix(".sqlite") && (name.hasPrefix("private-") || name.hasPrefix("shared-")) {
            let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
            guard let file = try? makeFile(path: path) else { continue }
            guard let stamp = try? file.serverStamp(), (try? file.prepareForServer()) != nil else {
                try? file.close()
                continue
            }
            let duplicate = lock.withLock {
                if open[stamp] != nil { return true }
                open[stamp] = file
                return false
            }
            if duplicate {
                try? file.close()
                throw SQLiteCloudDatabase.OpenError.cannotOpen(
                    path: path,
                    reason: "another file of \(directory) is \(stamp.userRecordName)'s \(stamp.scope) database too; "
                        + "move the one that isn't theirs out of the directory")
            }
        }
    }

    /// Every open file.
    func all() -> [SQLiteFile] {
        lock.withLock { Array(open.values) }
    }

    func closeAll() throws {
        let files = lock.withLock {
            defer {
                open = [:]
                closed = true
            }
            return Array(open.values)
        }
        for file in files { try file.close() }
    }

    private func makeFile(path: String) throws -> SQLiteFile {
        try SQLiteFile(path: path, maximumTombstones: maximumTombstones)
    }

    /// A user record name made safe for a file name: anything but letters, digits, `_` and `-` percent-encoded, so
    /// that two users never share a file.
    static func safe(_ name: String) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        allowed.insert(charactersIn: "_-")
        return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
    }
}
