import Foundation
import NestedCloudKitCodable
import NestedCloudKitRules

/// The files of a ``SQLiteCloudServer``, opened once each and kept open.
final class SQLiteServerFiles: @unchecked Sendable {
    private let directory: String
    private let maximumTombstones: Int
    // Guards `open`, `opening` and `closed`; held only while they are looked up or changed, never while a file is
    // opened or closed (which reads and writes it) nor across a request.
    private let lock = NSLock()
    private var open: [SQLiteFile.ServerStamp: SQLiteFile] = [:]
    /// The files being opened, each by one task that the requests asking for it meanwhile wait on.
    private var opening: [SQLiteFile.ServerStamp: Task<SQLiteFile, any Error>] = [:]
    /// Set by ``closeAll()``: a closed server opens no file again, so a request still running after a reset can't
    /// make one in a folder a new server owns.
    private var closed = false

    init(directory: String, maximumTombstones: Int) {
        self.directory = directory
        self.maximumTombstones = maximumTombstones
    }

    /// A user's file, opened (and made) now if it isn't yet: at `path` if given, else under its own name in the
    /// directory. The file is opened outside the lock, by one task: requests for it meanwhile wait for that task
    /// without blocking a thread, and requests for other files don't wait at all.
    func file(of user: String, _ scope: CloudNotification.DatabaseScope, path: String? = nil) async throws
        -> SQLiteFile
    {
        let stamp = SQLiteFile.ServerStamp(userRecordName: user, scope: scope)
        let name = (scope == .shared ? "shared-" : "private-") + Self.safe(user) + ".sqlite"
        let filePath = path ?? URL(fileURLWithPath: directory).appendingPathComponent(name).path
        let found: Lookup = try lock.withLock {
            if let file = open[stamp] { return .open(file) }
            guard !closed else { throw closedError }
            if let task = opening[stamp] { return .opening(task) }
            let task = Task { try await self.openFile(stamp, at: filePath) }
            opening[stamp] = task
            return .opening(task)
        }
        // Nearly always: a file opened before.
        switch found {
        case .open(let file): return file
        case .opening(let task): return try await task.value
        }
    }

    /// Opens, stamps and prepares a user's file, then files it as open, unless the server closed meanwhile: then
    /// the file is closed before the task ends, so that ``closeAll()``, which waits for the task, returns only once
    /// no file of the server is open. A failed open is forgotten, for the next request to try again.
    private func openFile(_ stamp: SQLiteFile.ServerStamp, at path: String) async throws -> SQLiteFile {
        let file: SQLiteFile
        do {
            file = try await Self.fileQueue.run { [maximumTombstones] in
                let file = try SQLiteFile(path: path, maximumTombstones: maximumTombstones)
                do {
                    if try file.serverStamp() != stamp { try file.stamp(stamp) }
                    try file.prepareForServer()
                } catch {
                    try? file.close()
                    throw error
                }
                return file
            }
        } catch {
            lock.withLock { _ = opening.removeValue(forKey: stamp) }
            throw error
        }
        let filed = lock.withLock {
            opening[stamp] = nil
            guard !closed else { return false }
            open[stamp] = file
            return true
        }
        guard filed else {
            try? await Self.fileQueue.run { try file.close() }
            throw closedError
        }
        return file
    }

    /// Opening a file, and closing one (which checkpoints it), read and write it synchronously through GRDB. They
    /// run on this queue, so that they never block a thread of the cooperative pool, which every request shares;
    /// one at a time, so that many users' first requests don't make a thread each.
    private static let fileQueue = BlockingQueue(label: "NestedCloudKitSQLite.SQLiteServerFiles")

    /// A file open already, or the task opening it.
    private enum Lookup {
        case open(SQLiteFile)
        case opening(Task<SQLiteFile, any Error>)
    }

    private var closedError: CloudDatabaseError {
        .internalError("the server of \(directory) is closed: open it again")
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

    /// Closes every file, and waits for the files being opened: each closes itself once open. A file a request
    /// was opening is never left open, nor still being written, after this returns (a reset deletes the folder).
    func closeAll() async throws {
        let (files, inFlight) = lock.withLock {
            defer {
                open = [:]
                closed = true
            }
            return (Array(open.values), Array(opening.values))
        }
        var closingFailure: (any Error)?
        do {
            try await Self.fileQueue.run {
                var firstFailure: (any Error)?
                for file in files {
                    do { try file.close() } catch { firstFailure = firstFailure ?? error }
                }
                if let firstFailure { throw firstFailure }
            }
        } catch {
            closingFailure = error
        }
        for task in inFlight { _ = await task.result }
        if let closingFailure { throw closingFailure }
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
