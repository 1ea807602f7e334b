import Foundation
import NestedCloudKitCodable

/// The files of a ``SQLiteCloudServer``, opened once each and kept open.
final class SQLiteServerFiles: @unchecked Sendable {
    private let directory: String
    private let maximumItemsPerRequest: Int
    private let maximumTombstones: Int
    private let clock: any CloudClock
    // Guards `open`; held only while a file is looked up or opened, never across a request.
    private let lock = NSLock()
    private var open: [SQLiteCloudDatabase.ServerStamp: SQLiteCloudDatabase] = [:]

    init(directory: String, maximumItemsPerRequest: Int, maximumTombstones: Int, clock: any CloudClock) {
        self.directory = directory
        self.maximumItemsPerRequest = maximumItemsPerRequest
        self.maximumTombstones = maximumTombstones
        self.clock = clock
    }

    /// A user's file, opened (and made) now if it isn't yet: at `path` if given, else under its own name in the
    /// directory.
    func file(of user: String, _ scope: CloudNotification.DatabaseScope, path: String? = nil) throws
        -> SQLiteCloudDatabase
    {
        let stamp = SQLiteCloudDatabase.ServerStamp(userRecordName: user, scope: scope)
        return try lock.withLock {
            if let file = open[stamp] { return file }
            let name = (scope == .shared ? "shared-" : "private-") + Self.safe(user) + ".sqlite"
            let file = try makeDatabase(
                path: path ?? URL(fileURLWithPath: directory).appendingPathComponent(name).path)
            if try file.serverStamp() != stamp { try file.stamp(stamp) }
            open[stamp] = file
            return file
        }
    }

    /// The users whose file of this scope is open: after ``openExisting()``, every user who has one.
    func users(_ scope: CloudNotification.DatabaseScope) -> [String] {
        lock.withLock { open.keys.filter { $0.scope == scope }.map(\.userRecordName).sorted() }
    }

    /// Opens the files an earlier run left, by the stamps they carry; files without one aren't the server's.
    func openExisting() throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names.sorted() where name.hasSuffix(".sqlite") {
            let file = try makeDatabase(path: URL(fileURLWithPath: directory).appendingPathComponent(name).path)
            guard let stamp = try file.serverStamp() else {
                try file.close()
                continue
            }
            lock.withLock { open[stamp] = file }
        }
    }

    /// Every open file.
    func all() -> [SQLiteCloudDatabase] {
        lock.withLock { Array(open.values) }
    }

    func closeAll() throws {
        let files = lock.withLock {
            defer { open = [:] }
            return Array(open.values)
        }
        for file in files { try file.close() }
    }

    private func makeDatabase(path: String) throws -> SQLiteCloudDatabase {
        try SQLiteCloudDatabase(
            path: path, maximumItemsPerRequest: maximumItemsPerRequest, maximumTombstones: maximumTombstones,
            clock: clock)
    }

    /// A user record name made safe for a file name: anything but letters, digits, `_` and `-` percent-encoded, so
    /// that two users never share a file.
    static func safe(_ name: String) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        allowed.insert(charactersIn: "_-")
        return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
    }
}
