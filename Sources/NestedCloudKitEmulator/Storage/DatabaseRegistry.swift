import Foundation
import NestedCloudKitCodable
import NestedCloudKitRules
import NestedCloudKitSQLite
import NestedCloudKitServer

/// The emulator's databases, made on first use: in memory, or a SQLite file each under the data directory.
///
/// It runs on a queue of its own (``FileQueueExecutor``), as what it does itself blocks: opening and closing the
/// public database's file, opening a container's server (which scans its folder and opens the files an earlier run
/// left), listing the databases on disk and a reset's deletions. A user's file that a request first asks for is
/// opened by the server, on the server's own queue; reads and writes run on GRDB's.
actor DatabaseRegistry {
    private let storage: EmulatorStorage
    private let fileQueue = FileQueueExecutor(label: "NestedCloudKitEmulator.databases")
    nonisolated var unownedExecutor: UnownedSerialExecutor { fileQueue.asUnownedSerialExecutor() }
    private let clock: EmulatorClock
    private var handles: [DatabaseKey: DatabaseHandle] = [:]
    /// One server per container and environment holds every user's private and shared databases, so that what one
    /// user shares shows in another's shared database.
    private var sharingServers: [SharingServerKey: any MultiUserCloudServer] = [:]
    private let revisions = RevisionCounter()
    /// The resets closing the databases and deleting their files: while any is, no database is opened, whose files
    /// a reset would delete under it.
    private var resetsUnderWay = 0
    /// Counts the resets begun: a request that was opening a database when one began drops what it opened, which
    /// may be in a folder the reset deleted, and is told to try again.
    private var resetsBegun = 0

    init(storage: EmulatorStorage, clock: EmulatorClock) {
        self.storage = storage
        self.clock = clock
    }

    /// Whether the registry runs on its own queue, off the cooperative pool; for the tests, which would see `false`
    /// if the actor lost its executor and went back to the pool.
    func runsOnFileQueue() -> Bool { fileQueue.isCurrent() }

    /// The database for `key`, opened or made now if it isn't yet. A key whose container or user isn't a valid
    /// name is refused before it reaches a file name.
    func handle(for key: DatabaseKey) async throws(ServerError) -> DatabaseHandle {
        if let handle = handles[key] { return handle }
        try DatabaseNames.check(key)
        let resetsBefore = resetsBegun
        let opened:
            (
                database: any CloudRecordStoringDatabase, standalone: (any StandaloneCloudDatabase)?,
                subscriptions: SubscriptionStore
            )
        do {
            opened = try await open(key)
        } catch {
            // A server closed by a reset under way fails its opens: that is the reset's answer, not the disk's.
            throw resetsBegun != resetsBefore || resetsUnderWay > 0 ? Self.resetUnderWay : error
        }
        let user = try? await opened.database.userRecordName()
        guard resetsBegun == resetsBefore, resetsUnderWay == 0 else {
            try? opened.standalone?.close()
            throw Self.resetUnderWay
        }
        // Another request may have opened it while this one asked for the user: this one's copy goes.
        if let handle = handles[key] {
            try? opened.standalone?.close()
            return handle
        }
        // A reset while this one asked made a new server for the container: this database is the old one's.
        if opened.standalone == nil,
            sharingServers[SharingServerKey(container: key.container, environment: key.environment)]?.holds(
                opened.database) != true
        {
            return try await handle(for: key)
        }
        let handle = DatabaseHandle(
            key: key, database: opened.database, standalone: opened.standalone, subscriptions: opened.subscriptions,
            databaseUserRecordName: user, revisions: revisions)
        handles[key] = handle
        return handle
    }

    /// The database for `key` if it exists (open, or a file an earlier run left), `nil` otherwise: for reads that
    /// mustn't make a database, such as a download.
    func existingHandle(for key: DatabaseKey) async throws(ServerError) -> DatabaseHandle? {
        if let handle = handles[key] { return handle }
        guard case .directory(let path) = storage, (try? DatabaseNames.check(key)) != nil,
            FileManager.default.fileExists(atPath: key.fileName(in: URL(fileURLWithPath: path)).path)
        else { return nil }
        return try await handle(for: key)
    }

    /// The database for `key` if it is open now.
    func openHandle(for key: DatabaseKey) -> DatabaseHandle? {
        handles[key]
    }

    /// The open databases whose records another user's request changed, through the in-memory server that holds
    /// them (a participant's write to an owner's zone, an owner's change to what a participant sees): the
    /// subscriptions of these must fire too.
    func handlesChangedByOthers(container: String, environment: EmulatorEnvironment) async -> [DatabaseHandle] {
        guard let server = sharingServers[SharingServerKey(container: container, environment: environment)] else {
            return []
        }
        let changed = server.takeDatabasesChangedByOthers()
        guard !changed.isEmpty else { return [] }
        return handles.values.filter { handle in
            guard let user = handle.key.user, handle.key.container == container,
                handle.key.environment == environment
            else { return false }
            let scope: CloudNotification.DatabaseScope = handle.key.scope == .shared ? .shared : .private
            return changed.contains(.init(userRecordName: Caller.userRecordName(for: user), scope: scope))
        }
        .sorted { $0.key.description < $1.key.description }
    }

    /// The databases that exist: those opened since the start, and under a data directory those left by an
    /// earlier run.
    func keys() -> [DatabaseKey] {
        var keys = Set(handles.keys)
        if case .directory(let path) = storage {
            keys.formUnion(Self.keysOnDisk(in: URL(fileURLWithPath: path)))
        }
        return keys.sorted { $0.description < $1.description }
    }

    /// Closes every database and deletes its data: the environment folders of each container folder
    /// (`CONTAINER/development`, `CONTAINER/production`), and a container folder left empty. Nothing else under the
    /// data directory is touched, in case it is shared with other files.
    func reset() async throws(ServerError) {
        resetsUnderWay += 1
        resetsBegun += 1
        defer { resetsUnderWay -= 1 }
        await close()
        guard case .directory(let path) = storage else { return }
        let fileManager = FileManager.default
        let root = URL(fileURLWithPath: path)
        for container in (try? fileManager.contentsOfDirectory(atPath: path)) ?? [] where !container.hasPrefix(".") {
            let folder = root.appendingPathComponent(container)
            for environment in EmulatorEnvironment.allCases {
                let data = folder.appendingPathComponent(environment.rawValue)
                guard fileManager.fileExists(atPath: data.path) else { continue }
                do {
                    try fileManager.removeItem(at: data)
                } catch {
                    throw ServerError(
                        .internalError,
                        "couldn't delete the \(environment.rawValue) data of container \(DatabaseKey.unsafe(container)) under the data directory: \(FilePaths.removed(from: "\(error)"))"
                    )
                }
            }
            if (try? fileManager.contentsOfDirectory(atPath: folder.path))?.isEmpty == true {
                try? fileManager.removeItem(at: folder)
            }
        }
    }

    /// Expires every change token of every database.
    func expireChangeTokens() async {
        for server in sharingServers.values { try? await server.expireEveryChangeToken() }
        for database in handles.values.compactMap(\.standalone) { try? await database.expireEveryChangeToken() }
    }

    /// Deletes a zone of a user's private database as iCloud would, whatever the storage.
    func deleteZone(_ zoneID: CloudRecord.ZoneID, of key: DatabaseKey, reason: CloudZoneDeletion.Reason)
        async throws(ServerError)
    {
        guard let user = key.user, key.scope == .private else {
            throw .badRequest("only a user's private database has zones to delete this way")
        }
        let server = try sharingServer(for: key)
        do {
            try await server.deleteZone(zoneID, ofUser: Caller.userRecordName(for: user), reason: reason)
        } catch {
            throw ServerError(
                .internalError,
                "couldn't delete zone \(zoneID.zoneName) of \(key): \(FilePaths.removed(from: "\(error)"))")
        }
    }

    /// Closes the SQLite files, checkpointing them, at shutdown and before a reset. A server's file that a request
    /// was opening is closed before this returns; a database a request opens meanwhile is dropped by that request
    /// (``handle(for:)``).
    func close() async {
        // Forgotten first: a request that comes in while the servers close opens new ones.
        let databases = handles.values.compactMap(\.standalone)
        let servers = Array(sharingServers.values)
        handles = [:]
        sharingServers = [:]
        for database in databases { try? database.close() }
        for server in servers { try? await server.close() }
    }

    /// Why nothing is opened while a reset deletes the files.
    private static let resetUnderWay = ServerError(
        .tryAgainLater, "the emulator is being reset: try again in a moment", retryAfter: 1)

    private func open(_ key: DatabaseKey) async throws(ServerError) -> (
        database: any CloudRecordStoringDatabase, standalone: (any StandaloneCloudDatabase)?,
        subscriptions: SubscriptionStore
    ) {
        guard resetsUnderWay == 0 else { throw Self.resetUnderWay }
        let clock = self.clock
        let userRecordName = key.user.map(Caller.userRecordName(for:))
        switch storage {
        case .inMemory:
            let subscriptions = SubscriptionStore(ownerRecordName: EmulatorState.ownerRecordName(of: key))
            guard key.scope != .public, let userRecordName else {
                let database = Self.makeInMemoryDatabase(clock: clock)
                return (database, database, subscriptions)
            }
            return (try await database(of: userRecordName, key: key, file: nil), nil, subscriptions)
        case .directory(let path):
            let file = key.fileName(in: URL(fileURLWithPath: path))
            do {
                try FileManager.default.createDirectory(
                    at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                let subscriptions = try SubscriptionStore(
                    file: URL(fileURLWithPath: file.path + ".subscriptions.json"),
                    ownerRecordName: EmulatorState.ownerRecordName(of: key))
                guard key.scope != .public, let userRecordName else {
                    let database = try SQLiteCloudDatabase(
                        path: file.path, maximumItemsPerRequest: 10_000, clock: clock)
                    return (database, database, subscriptions)
                }
                return (try await database(of: userRecordName, key: key, file: file), nil, subscriptions)
            } catch let damaged as SubscriptionStore.DamagedFile {
                throw ServerError(
                    .internalError,
                    "the subscriptions of the database \(key) can't be read (\(damaged.reason)); move its "
                        + "\(file.lastPathComponent).subscriptions.json file aside to open it without them, or put "
                        + "back a good copy")
            } catch let error as ServerError {
                throw error
            } catch {
                throw Self.cannotOpen(key, error)
            }
        }
    }

    /// A user's private or shared database, from the server of their container.
    private func database(of userRecordName: String, key: DatabaseKey, file: URL?) async throws(ServerError)
        -> any CloudRecordStoringDatabase
    {
        let server = try sharingServer(for: key)
        do {
            return try await server.database(
                of: userRecordName, scope: key.scope == .shared ? .shared : .private, fileName: file?.path)
        } catch {
            throw Self.cannotOpen(key, error)
        }
    }

    private static func cannotOpen(_ key: DatabaseKey, _ error: any Error) -> ServerError {
        ServerError(
            .internalError,
            "couldn't open the database \(key) under the data directory: \(FilePaths.removed(from: "\(error)")); check that the directory can be written"
        )
    }

    /// The server that holds every user's private and shared databases of a container and environment: in memory,
    /// or the SQLite files of the environment's folder under the data directory.
    func sharingServer(for key: DatabaseKey) throws(ServerError) -> any MultiUserCloudServer {
        let serverKey = SharingServerKey(container: key.container, environment: key.environment)
        if let server = sharingServers[serverKey] { return server }
        guard resetsUnderWay == 0 else { throw Self.resetUnderWay }
        let server: any MultiUserCloudServer
        switch storage {
        case .inMemory:
            server = Self.makeInMemoryDatabase(clock: clock)
        case .directory(let path):
            let folder = key.fileName(in: URL(fileURLWithPath: path)).deletingLastPathComponent()
            do {
                server = try SQLiteCloudServer(directory: folder.path, maximumItemsPerRequest: 10_000, clock: clock)
            } catch {
                throw Self.cannotOpen(key, error)
            }
        }
        sharingServers[serverKey] = server
        return server
    }

    /// The server of a container's users' databases.
    func sharingServer(container: String, environment: EmulatorEnvironment) throws(ServerError)
        -> any MultiUserCloudServer
    {
        try sharingServer(for: DatabaseKey(container: container, environment: environment, scope: .private))
    }

    /// The server of a container's users' databases if it has any: open, in memory, or with a folder an earlier
    /// run left under the data directory. For reads that mustn't make one, such as the admin API's.
    func existingSharingServer(container: String, environment: EmulatorEnvironment) throws(ServerError)
        -> (any MultiUserCloudServer)?
    {
        let key = DatabaseKey(container: container, environment: environment, scope: .private)
        if let server = sharingServers[SharingServerKey(container: container, environment: environment)] {
            return server
        }
        guard case .directory(let path) = storage else { return nil }
        let folder = key.fileName(in: URL(fileURLWithPath: path)).deletingLastPathComponent()
        guard FileManager.default.fileExists(atPath: folder.path) else { return nil }
        return try sharingServer(for: key)
    }

    /// The share with this short GUID in any container, with where it is and whose it is. Under a data directory,
    /// the containers an earlier run left are looked in too.
    func share(shortGUID: String) async -> (
        container: String, environment: EmulatorEnvironment, owner: String, record: CloudRecord
    )? {
        if case .directory = storage {
            for key in keys() where key.user != nil { _ = try? sharingServer(for: key) }
        }
        for (key, server) in sharingServers.sorted(by: { $0.key.container < $1.key.container }) {
            if let (owner, record) = try? await server.share(withShortGUID: shortGUID) {
                return (key.container, key.environment, owner, record)
            }
        }
        return nil
    }

    private static func makeInMemoryDatabase(clock: EmulatorClock) -> InMemoryCloudDatabase {
        // Web Services takes 200 operations a request; the emulator checks that itself, and lets the database take
        // what a request may hold after the checks.
        InMemoryCloudDatabase(maximumItemsPerRequest: 10_000, clock: clock)
    }

    private struct SharingServerKey: Hashable {
        var container: String
        var environment: EmulatorEnvironment
    }

    /// The databases an earlier run left under `directory`: `CONTAINER/ENVIRONMENT/SCOPE[-USER].sqlite`.
    private static func keysOnDisk(in directory: URL) -> [DatabaseKey] {
        let manager = FileManager.default
        var keys: [DatabaseKey] = []
        for container in (try? manager.contentsOfDirectory(atPath: directory.path)) ?? [] {
            for environment in EmulatorEnvironment.allCases {
                let folder = directory.appendingPathComponent(container).appendingPathComponent(environment.rawValue)
                for file in (try? manager.contentsOfDirectory(atPath: folder.path)) ?? []
                where file.hasSuffix(".sqlite") {
                    let name = String(file.dropLast(".sqlite".count))
                    let parts = name.split(separator: "-", maxSplits: 1).map(String.init)
                    guard let scope = parts.first.flatMap(DatabaseKey.Scope.init(rawValue:)) else { continue }
                    keys.append(
                        DatabaseKey(
                            container: DatabaseKey.unsafe(container), environment: environment, scope: scope,
                            user: parts.count > 1 ? DatabaseKey.unsafe(parts[1]) : nil))
                }
            }
        }
        return keys
    }
}
