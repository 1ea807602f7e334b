import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite

/// The emulator's databases, made on first use: in memory, or a SQLite file each under the data directory.
actor DatabaseRegistry {
    private let storage: EmulatorStorage
    private let clock: EmulatorClock
    private var handles: [DatabaseKey: DatabaseHandle] = [:]
    /// In memory, one server per container and environment holds every user's private and shared databases, so
    /// that what one user shares shows in another's shared database.
    private var sharingServers: [SharingServerKey: InMemoryCloudDatabase] = [:]
    private let revisions = RevisionCounter()

    init(storage: EmulatorStorage, clock: EmulatorClock) {
        self.storage = storage
        self.clock = clock
    }

    /// The database for `key`, opened or made now if it isn't yet. A key whose container or user isn't a valid
    /// name is refused before it reaches a file name.
    func handle(for key: DatabaseKey) async throws(ServerError) -> DatabaseHandle {
        if let handle = handles[key] { return handle }
        try DatabaseNames.check(key)
        let opened = try open(key)
        let user = try? await opened.database.userRecordName()
        // Another request may have opened it while this one asked for the user.
        if let handle = handles[key] { return handle }
        // A reset while this one asked made a new server for the container: this database is the old one's.
        if let scoped = opened.database as? InMemoryCloudDatabase.ScopedDatabase,
            sharingServers[SharingServerKey(container: key.container, environment: key.environment)] !== scoped.server
        {
            return try await handle(for: key)
        }
        let handle = DatabaseHandle(
            key: key, database: opened.database, subscriptions: opened.subscriptions, databaseUserRecordName: user,
            revisions: revisions)
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
        let changed = await server.takeDatabasesChangedByOthers()
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
    func reset() throws(ServerError) {
        for handle in handles.values {
            try? (handle.database as? SQLiteCloudDatabase)?.close()
        }
        handles = [:]
        sharingServers = [:]
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

    /// Expires every change token: the in-memory database's directly, a SQLite file's by compacting away every
    /// tombstone a token could still need.
    func expireChangeTokens() async {
        for server in sharingServers.values { await server.expireEveryUsersChangeTokens() }
        for handle in handles.values {
            if let memory = handle.database as? InMemoryCloudDatabase {
                await memory.expireChangeTokens()
            } else if let file = handle.database as? SQLiteCloudDatabase {
                try? await file.compactChangeLog(keepingTombstones: 0)
            }
        }
    }

    /// Closes the SQLite files, checkpointing them, at shutdown.
    func close() {
        for handle in handles.values {
            try? (handle.database as? SQLiteCloudDatabase)?.close()
        }
        handles = [:]
    }

    private func open(_ key: DatabaseKey) throws(ServerError) -> (
        database: any CloudRecordStoringDatabase, subscriptions: SubscriptionStore
    ) {
        let clock = self.clock
        switch storage {
        case .inMemory:
            let database: any CloudRecordStoringDatabase
            if key.scope != .public, let user = key.user {
                let server = sharingServer(for: key)
                let userRecordName = Caller.userRecordName(for: user)
                database =
                    key.scope == .shared
                    ? server.sharedDatabase(of: userRecordName) : server.privateDatabase(of: userRecordName)
            } else {
                database = Self.makeInMemoryDatabase(clock: clock)
            }
            return (database, SubscriptionStore(ownerRecordName: EmulatorState.ownerRecordName(of: key)))
        case .directory(let path):
            let file = key.fileName(in: URL(fileURLWithPath: path))
            do {
                try FileManager.default.createDirectory(
                    at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                let database = try SQLiteCloudDatabase(
                    path: file.path, maximumItemsPerRequest: 10_000, clock: clock)
                let subscriptions = try SubscriptionStore(
                    file: URL(fileURLWithPath: file.path + ".subscriptions.json"),
                    ownerRecordName: EmulatorState.ownerRecordName(of: key))
                return (database, subscriptions)
            } catch let damaged as SubscriptionStore.DamagedFile {
                throw ServerError(
                    .internalError,
                    "the subscriptions of the database \(key) can't be read (\(damaged.reason)); move its "
                        + "\(file.lastPathComponent).subscriptions.json file aside to open it without them, or put "
                        + "back a good copy")
            } catch {
                throw ServerError(
                    .internalError,
                    "couldn't open the database \(key) under the data directory: \(FilePaths.removed(from: "\(error)")); check that the directory can be written"
                )
            }
        }
    }

    /// The server that holds every user's private and shared databases of a container and environment, in memory.
    func sharingServer(for key: DatabaseKey) -> InMemoryCloudDatabase {
        let serverKey = SharingServerKey(container: key.container, environment: key.environment)
        if let server = sharingServers[serverKey] { return server }
        let server = Self.makeInMemoryDatabase(clock: clock)
        sharingServers[serverKey] = server
        return server
    }

    /// The server of a container's users' databases, if the storage is in memory: shares and the shared database
    /// need one (FIDELITY.md).
    func sharingServer(container: String, environment: EmulatorEnvironment) -> InMemoryCloudDatabase? {
        guard case .inMemory = storage else { return nil }
        return sharingServer(for: DatabaseKey(container: container, environment: environment, scope: .private))
    }

    /// The share with this short GUID in any container, with where it is and whose it is.
    func share(shortGUID: String) async -> (
        container: String, environment: EmulatorEnvironment, owner: String, record: CloudRecord
    )? {
        for (key, server) in sharingServers.sorted(by: { $0.key.container < $1.key.container }) {
            if let (owner, record) = await server.share(withShortGUID: shortGUID) {
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
