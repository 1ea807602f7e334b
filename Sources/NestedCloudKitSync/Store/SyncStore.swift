import Foundation
import GRDB
import Logging
import NestedCloudKitCodable

/// The app's local copy of its models: a SQLite database that reads and writes at local speed, online or not, and
/// remembers every change the server doesn't have yet.
///
/// ```swift
/// let store = try SyncStore(path: documents.appending(path: "school.sqlite").path)
/// try await store.save(school)                        // durable when it returns, queued for upload
/// let again = try await store.fetch(School.self, id: school.id)
/// let engine = SyncEngine(store: store, database: CloudKitDatabase(container.privateCloudDatabase))
/// try await engine.sync()
/// ```
///
/// Saving a model writes the records the encoder makes of it (the whole graph) and queues them, in one transaction.
/// The store keeps each record's system fields, so a model needs no property for them: a decoded, changed and saved
/// again model updates its records instead of conflicting. Saving a value that didn't change queues nothing.
///
/// A store is safe to use from any task, also while a ``SyncEngine`` syncs it.
public final class SyncStore: Sendable, StoreConnected {
    /// The zone models are saved in unless a call names another: a custom zone of the private database, created on
    /// the first sync.
    public static let defaultZoneID = CloudRecord.ZoneID(zoneName: "NestedCloudKitSync")

    /// The zone this store saves models in unless a call names another.
    public let zoneID: CloudRecord.ZoneID
    /// The file, or `nil` for a store in memory.
    public var path: String? { connection.path }

    /// The database, shared with the engine's view of it (``ledger``).
    let connection: StoreConnection
    /// Where the store logs (``SyncLog``).
    let logger: Logger
    /// The engine's view of the same database: the server's copies, the queue, the tokens.
    package let ledger: SyncLedger
    /// The store's database, for the package's benchmarks: they time an observation from the commit itself, which
    /// a transaction observer of this writer sees.
    package var databaseWriter: any DatabaseWriter { writer }

    /// The store's database, to read: the tables of the record types (<doc:HowTheStoreKeepsRecords>) with GRDB or
    /// SQL of the app's own, and a GRDB `ValueObservation` of them, which sees every write of the store and its
    /// engine (an observation on another connection to the file sees only that connection's writes). Writes
    /// aren't possible through it: change data through the store, which queues what the server should get.
    public var database: any DatabaseReader { AnyDatabaseReader(writer) }

    /// Opens the store in a SQLite file, creating it if needed.
    ///
    /// - Parameters:
    ///   - path: The file. Its directory must exist.
    ///   - zoneID: The zone models are saved in unless a call names another.
    ///   - clock: The time of the user's edits, which conflict policies compare.
    ///   - logger: Where the store logs: the file created or migrated, and the local data reset; by default a
    ///     logger labelled `NestedCloudKitSync` from the handler the app bootstrapped (<doc:DiagnosingSync>).
    /// - Throws: ``SyncError/store(_:)`` if the file can't be opened or isn't a store.
    public convenience init(
        path: String, zoneID: CloudRecord.ZoneID = SyncStore.defaultZoneID, clock: any CloudClock = SystemCloudClock(),
        logger: Logger = Logger(label: "NestedCloudKitSync")
    ) throws {
        let pool: DatabasePool
        do {
            var configuration = StoreClockFunction.configuration(StoreWriteGuard.configuration(), clock: clock)
            configuration.busyMode = .timeout(10)
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw SyncError.store("can't open the store at \(path): \(error)", underlying: error)
        }
        try self.init(writer: pool, path: path, zoneID: zoneID, clock: clock, logger: logger)
    }

    /// Opens a store that lives in memory only, for tests and previews.
    public static func inMemory(
        zoneID: CloudRecord.ZoneID = SyncStore.defaultZoneID, clock: any CloudClock = SystemCloudClock(),
        logger: Logger = Logger(label: "NestedCloudKitSync")
    ) throws -> SyncStore {
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(
                configuration: StoreClockFunction.configuration(StoreWriteGuard.configuration(), clock: clock))
        } catch {
            throw SyncError.store("can't open a store in memory: \(error)", underlying: error)
        }
        return try SyncStore(writer: queue, path: nil, zoneID: zoneID, clock: clock, logger: logger)
    }

    private init(
        writer: any DatabaseWriter, path: String?, zoneID: CloudRecord.ZoneID, clock: any CloudClock, logger: Logger
    ) throws {
        self.logger = logger
        connection = try StoreConnection(writer: writer, path: path, clock: clock, logger: logger)
        ledger = SyncLedger(connection: connection)
        self.zoneID = zoneID
    }

    /// The store as a `CloudDatabase`: what `CKRecordDecoder` reads references from, offline.
    public var localDatabase: LocalCloudDatabase { LocalCloudDatabase(store: self) }

    // MARK: Saving and deleting

    /// Saves a model and everything it references, and queues the records that changed for upload.
    ///
    /// The model's values replace the stored ones, field by field, and the fields whose values differ become the
    /// user's edits; a property that is `nil` or empty clears its field. A field the stored record holds and the
    /// model doesn't map (one a newer version of the app added) stays as it is, here and on the server: an older
    /// version of an app never erases what a newer one wrote. A model that carries its system fields (a
    /// `CloudRecord.SystemFields?` property) and was read
    /// before a sync changed its record merges instead: only the fields the app changed since the read take the
    /// model's values (<doc:UpdatingModels>). A model without system fields can't say what it read, so its save
    /// replaces every field, another device's newer value included; to change a few fields of a model, use
    /// ``update(_:id:in:_:)``.
    ///
    /// - Parameters:
    ///   - value: The model.
    ///   - zoneID: The zone of its records; the store's ``zoneID`` if omitted.
    /// - Returns: The IDs of the records written, the root last.
    /// - Throws: `CKCodableError` if the value can't be encoded;
    ///   ``SyncError/recordFromNewerVersion(_:recordVersion:modelVersion:)`` if a record was written by a newer
    ///   layout version of its model (nothing is saved); ``SyncError/store(_:)`` if the write fails.
    @discardableResult
    public func save<Value: CKEncodable>(_ value: Value, in zoneID: CloudRecord.ZoneID? = nil) async throws
        -> [CloudRecord.ID]
    {
        // Each record lists the fields its model cleared, so that the fields it doesn't list are known to be ones
        // the model doesn't map.
        let records = try CKRecordEncoder(zoneID: zoneID ?? self.zoneID).encodeRecordsListingClearedFields(value)
        try await save(records, keepingUnmappedFields: true)
        return records.map(\.id)
    }

    /// Saves records as the app's own changes, and queues those that changed for upload.
    ///
    /// A record's fields replace the stored ones: a field the record doesn't hold is cleared, on the server too.
    /// The record's system fields are ignored; the store keeps the server's.
    /// A file asset is copied into the store's folder (beside the store's file), so the app may delete its own
    /// file once the call returns.
    public func save(_ records: [CloudRecord]) async throws {
        try await save(records, keepingUnmappedFields: false)
    }

    /// Saves records as the app's own changes; with `keepingUnmappedFields`, records a model's encoding made, whose
    /// ``CloudRecord/clearedFieldNames`` list what the model cleared, and whose other missing fields stay.
    private func save(_ records: [CloudRecord], keepingUnmappedFields: Bool) async throws {
        guard !records.isEmpty else { return }
        let assets = assetFiles
        try await write { db in
            let now = self.nextEditTime()
            var changed = 0
            let batch = Self.sharedZoneBatch(records)
            for record in records
            where try Self.applyLocalSave(
                record, at: now, assets: assets, batch: batch, keepingUnmappedFields: keepingUnmappedFields, in: db)
            {
                changed += 1
            }
            if changed > 0 { try StoreTables.noteLocalChange(in: db) }
        }
    }

    /// Deletes a model's record and queues the deletion; records that hold a `.deleteSelf` reference to it go too,
    /// as they will on the server.
    ///
    /// - Returns: The IDs of the records deleted, the model's first; empty if the store didn't have it.
    /// - Throws: ``SyncError/unknownZone(_:)`` if the store has nothing in the zone.
    @discardableResult
    public func delete<Value: CKRecordRepresentable>(_ value: Value, in zoneID: CloudRecord.ZoneID? = nil)
        async throws -> [CloudRecord.ID]
    {
        try await deleteRecords(
            withIDs: [CloudRecord.ID(recordName: value.cloudKitIdentifier, zoneID: zoneID ?? self.zoneID)])
    }

    /// Deletes the model of a type with an identifier, without a value of it: `delete(Memo.self, id: "m")`. Records
    /// that hold a `.deleteSelf` reference to it go too.
    ///
    /// The record's name is the identifier as ``fetch(_:id:in:)`` reads it (the default `cloudKitIdentifier` of an
    /// `Identifiable` model).
    /// - Returns: The IDs of the records deleted, the model's first; empty if the store didn't have it.
    /// - Throws: ``SyncError/unknownZone(_:)`` if the store has nothing in the zone.
    @discardableResult
    public func delete<Value: CKRecordRepresentable & Identifiable>(
        _ type: Value.Type, id: Value.ID, in zoneID: CloudRecord.ZoneID? = nil
    ) async throws -> [CloudRecord.ID] {
        try await deleteRecords(
            withIDs: [
                CloudRecord.ID(
                    recordName: NestedCloudKitCodable.recordName(describing: id), zoneID: zoneID ?? self.zoneID)
            ])
    }

    /// Deletes records and queues the deletions, with the records that hold `.deleteSelf` references to them.
    ///
    /// An ID names its zone: `CloudRecord.ID(recordName: "m")` is in the default zone, not the store's
    /// (``zoneID``), so name the zone (`CloudRecord.ID(recordName: "m", zoneID: store.zoneID)`) or use
    /// ``delete(_:id:in:)``. An ID the store doesn't have in a zone it holds deletes nothing, as the returned IDs
    /// show.
    /// - Returns: The IDs of the records deleted, cascades included.
    /// - Throws: ``SyncError/unknownZone(_:)`` if an ID is in a zone the store has nothing in (nothing is deleted).
    @discardableResult
    public func deleteRecords(withIDs ids: [CloudRecord.ID]) async throws -> [CloudRecord.ID] {
        try await write { db in
            for zoneID in Set(ids.map(\.zoneID)) where zoneID != self.zoneID {
                guard try SyncLedger.zoneState(zoneID, in: db).isUnknown else { continue }
                throw SyncError.unknownZone(zoneID)
            }
            let deleted = try Self.applyLocalDeletes(ids, in: db)
            if !deleted.isEmpty { try StoreTables.noteLocalChange(in: db) }
            return deleted
        }
    }

    // MARK: Reading

    /// The record with an ID, with the system fields of its last server copy; `nil` if the store doesn't have it.
    public func record(withID id: CloudRecord.ID) async throws -> CloudRecord? {
        try await read { db in try StoreTables.record(id, in: db)?.record }
    }

    /// Every record of a type in a zone, by record name.
    public func records(ofType recordType: String, in zoneID: CloudRecord.ZoneID? = nil) async throws
        -> [CloudRecord]
    {
        let zone = zoneID ?? self.zoneID
        return try await read { db in try StoreTables.records(ofType: recordType, in: zone, in: db) }
    }

    /// The records that reference a record, optionally through one field: "the students of this school", through
    /// the students' `school` field, with no limit on their number.
    public func records(referencing target: CloudRecord.ID, field: String? = nil) async throws -> [CloudRecord] {
        try await read { db in try Self.holderRecords(of: target, field: field, in: db) }
    }

    /// Decodes the model whose record has a name, with everything it references, from the store, in one read.
    ///
    /// - Returns: The model, or `nil` if the store has no record with that name.
    public func fetch<Value: CKDecodable>(
        _ type: Value.Type, recordName: String, in zoneID: CloudRecord.ZoneID? = nil
    ) async throws -> Value? {
        let id = CloudRecord.ID(recordName: recordName, zoneID: zoneID ?? self.zoneID)
        return try await read { db in Transfer(value: try Self.fetch(Value.self, id: id, in: db)) }.value
    }

    /// Decodes the model with an identifier, with everything it references, from the store.
    public func fetch<Value: CKDecodable & Identifiable>(
        _ type: Value.Type, id: Value.ID, in zoneID: CloudRecord.ZoneID? = nil
    ) async throws -> Value? {
        try await fetch(type, recordName: NestedCloudKitCodable.recordName(describing: id), in: zoneID)
    }

    /// Decodes every model of a type in a zone, by record name, in one read.
    ///
    /// To filter, sort or limit in SQLite, use a ``ModelQuery`` (``fetch(_:)``).
    /// - Parameters:
    ///   - type: The model's type.
    ///   - recordType: The type's record type; its name unless the type declares another
    ///     `CKRecordRepresentable/cloudKitRecordType`.
    ///   - zoneID: The zone; the store's ``zoneID`` if omitted.
    public func fetchAll<Value: CKDecodable>(
        _ type: Value.Type, recordType: String? = nil, in zoneID: CloudRecord.ZoneID? = nil
    ) async throws -> [Value] {
        let zone = zoneID ?? self.zoneID
        let recordType = recordType ?? StoreSQL.recordType(named: type)
        return try await read { db in
            Transfer(value: try Self.fetchAll(Value.self, recordType: recordType, in: zone, in: db))
        }.value
    }

    /// Decodes every model that references a record, optionally through one field, in one read.
    public func fetch<Value: CKDecodable>(
        _ type: Value.Type, referencing target: CloudRecord.ID, field: String? = nil
    ) async throws -> [Value] {
        try await read { db in
            Transfer(
                value: try Self.decode(Value.self, from: Self.holderRecords(of: target, field: field, in: db), in: db))
        }.value
    }

    private static func holderRecords(of target: CloudRecord.ID, field: String?, in db: Database) throws
        -> [CloudRecord]
    {
        let holders = try StoreTables.holders(of: target, field: field, in: db).map(\.holder)
        var unique: [CloudRecord.ID] = []
        var seen: Set<CloudRecord.ID> = []
        for holder in holders where seen.insert(holder).inserted { unique.append(holder) }
        let found = Dictionary(
            try StoreTables.records(unique, in: db).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return unique.compactMap { found[$0] }
    }

    /// Deletes every record, pending change, token and the account the data belonged to: what an app does when
    /// the user signs out or another user signs in. The next sync fetches everything again.
    public func resetLocalStore() async throws {
        try await write { db in
            // References first: then the triggers of each deleted record (ncs_record_reference_rows_removed) find
            // none to update.
            for table in [
                "ncs_reference", "ncs_record", "ncs_outbox", "ncs_zone", "ncs_asset_use", "ncs_skipped",
                "ncs_server_copy",
            ] {
                try db.execute(sql: "DELETE FROM \(table)")
            }
            try db.execute(sql: "DELETE FROM ncs_state WHERE key <> 'counter'")
            for table in [StoreTables.queueTable, StoreTables.skippedTable, StoreTables.stateTable] {
                try StoreTables.noteChanged(table, in: db)
            }
        }
        logger.warning("local store reset")
        try? FileManager.default.removeItem(at: assetFiles.directory)
    }

    /// Closes the store's database: every call after this throws ``SyncError/closed``. Nothing is lost: pending
    /// changes stay in the file for the store opened next, which is what a test of a restart does. Close the
    /// engine that syncs the store first (``SyncEngine/close()``).
    ///
    /// - Throws: ``SyncError/store(_:)`` if the database can't be closed (a read still running).
    public func close() async throws {
        try await connection.close()
    }
}
