import Foundation
import GRDB
import Logging
import NestedCloudKitCodable

/// The store's SQLite database and what each of its transactions needs, shared by its two users: the app's
/// ``SyncStore`` and the engine's ``SyncLedger``.
///
/// It opens and migrates the file, maps SQLite's failures to ``SyncError``, collects unused asset copies in the
/// transaction that let them go, and hands out edit times that never go backwards.
final class StoreConnection: Sendable {
    let writer: any DatabaseWriter
    /// The file, or `nil` for a store in memory.
    let path: String?
    let clock: any CloudClock
    let assetFiles: AssetFiles
    /// Which record types each transaction changed, for the observations of records.
    let recordChanges = RecordTypeChanges()
    /// The turns of the observations' reads (``ObservationReadGate``).
    let observationReads = ObservationReadGate()
    private let editClock: EditClock
    private let isClosed = Locked(false)

    init(writer: any DatabaseWriter, path: String?, clock: any CloudClock, logger: Logger) throws {
        self.writer = writer
        self.path = path
        self.clock = clock
        assetFiles = AssetFiles(
            directory: path.map { URL(fileURLWithPath: $0 + "-assets").standardizedFileURL }
                ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                    "NestedCloudKitSync-\(UUID().uuidString)"
                ).standardizedFileURL)
        do {
            try StoreSchema.migrate(writer, logger: logger)
            let changes = recordChanges
            try writer.read { db in try changes.prime(db) }
            writer.add(transactionObserver: recordChanges, extent: .databaseLifetime)
            let assets = assetFiles
            try writer.write { db in try assets.sweep(in: db) }
            let latest = try writer.read { db in
                try Int64.fetchOne(db, sql: "SELECT MAX(edit_time) FROM ncs_record") ?? 0
            }
            editClock = EditClock(clock: clock, latest: latest)
        } catch {
            throw SyncError.store(
                "can't prepare the store\(path.map { " at \($0)" } ?? ""): \(error)", underlying: error)
        }
    }

    deinit {
        // A store in memory takes its asset copies with it; a file's stay beside the file.
        if path == nil { try? FileManager.default.removeItem(at: assetFiles.directory) }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard !isClosed.withLock({ $0 }) else { throw SyncError.closed }
        do {
            return try await writer.read(body)
        } catch {
            throw Self.failure(error, of: "reading")
        }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard !isClosed.withLock({ $0 }) else { throw SyncError.closed }
        let assets = assetFiles
        do {
            return try await writer.write { db in
                let result = try body(db)
                // In the same transaction: a copy let go of here is deleted before any other write can point to it.
                try assets.collectGarbage(in: db)
                return result
            }
        } catch let error as StaleResolution {
            // The ledger's and the store's own signals to the caller of the write, not failures.
            throw error
        } catch let error as ChangeFailed {
            throw error
        } catch {
            throw Self.failure(error, of: "writing")
        }
    }

    /// What a failed read or write throws: the library's own errors (a model that doesn't decode) as they are,
    /// SQLite's as a failure of the store.
    private static func failure(_ error: any Error, of access: String) -> any Error {
        if error is SyncError || error is CKCodableError { return error }
        return SyncError.store("\(access) the store failed: \(error)", underlying: error)
    }

    /// Waits for a write under way, then makes every later call fail with ``SyncError/closed`` and closes the file.
    func close() async throws {
        guard isClosed.withLock({ closed in !closed }) else { return }
        try await writer.barrierWriteWithoutTransaction { _ in self.isClosed.withLock { $0 = true } }
        do {
            try writer.close()
        } catch {
            throw SyncError.store("closing the store failed: \(error)", underlying: error)
        }
    }

    /// The current edit time, for a local change or a write the engine makes on the user's behalf.
    func nextEditTime() -> Int64 { editClock.next() }
}

/// A user of the store's connection: the read and write transactions, the clock and the asset copies, by the
/// connection's names.
protocol StoreConnected {
    var connection: StoreConnection { get }
}

extension StoreConnected {
    var writer: any DatabaseWriter { connection.writer }
    var clock: any CloudClock { connection.clock }
    var assetFiles: AssetFiles { connection.assetFiles }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await connection.read(body)
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await connection.write(body)
    }

    func nextEditTime() -> Int64 { connection.nextEditTime() }
}
