import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitRules

/// A ``SyncStore`` as a `CloudDatabase`: records by ID and queries answer from the local store, offline, so
/// `CKRecordDecoder` decodes models from it; saves and deletes are the app's own changes, queued for upload.
///
/// Saves and deletes keep CloudKit's rules, with the store's record standing for the server's: a save policy,
/// `.validate` and `.deleteSelf` references, the 1 MB limit, atomic zones and the per-request limit. A record's
/// system fields stay those of its last server copy (a record the server hasn't had yet comes with empty ones, no
/// change tag): a save doesn't give it a new change tag, the upload does. So, under `ifServerRecordUnchanged`, a
/// record saved with the change tag it was read with applies, one read before a sync brought a newer copy
/// conflicts with `serverRecordChanged`, and a record read before its first upload saves, without a tag, as it
/// was read. Without versions until the upload, a record made anew with the ID of one not yet uploaded updates it,
/// where a server would refuse it.
///
/// Change tracking and subscriptions belong to the server: those calls throw `CloudDatabaseError/invalidArguments(_:)`.
public struct LocalCloudDatabase: CloudDatabase, CloudRecordStoringDatabase {
    /// The store it reads.
    package let store: SyncStore

    /// The most items one call takes: a larger request throws `limitExceeded` and changes nothing.
    public let maximumItemsPerRequest: Int

    /// The store as a `CloudDatabase`; ``SyncStore/localDatabase`` is this with the default limit.
    ///
    /// - Parameters:
    ///   - store: The store.
    ///   - maximumItemsPerRequest: The most items one call takes. A local call has no server's limit; this only
    ///     bounds one transaction and sizes the decoder's batches.
    package init(store: SyncStore, maximumItemsPerRequest: Int = 10_000) {
        self.store = store
        self.maximumItemsPerRequest = maximumItemsPerRequest
    }

    /// The records with these IDs in the store, each as a result; a missing one is `unknownItem`.
    public func records(for ids: [CloudRecord.ID], desiredKeys: [String]?) async throws -> CloudRecordResults {
        try checkLimit(ids.count)
        let found = try await store.read { db in try StoreTables.records(ids, in: db) }
        var results: CloudRecordResults = [:]
        for record in found { results[record.id] = .success(Self.asRead(record).keepingFields(desiredKeys)) }
        for id in ids where results[id] == nil { results[id] = .failure(.unknownItem(id)) }
        return results
    }

    /// Applies the items of a modify request as the app's own changes, queued for upload, under CloudKit's rules
    /// (see the type's description); the store's copies are returned. Deleting a record deletes, in turn, the
    /// records that hold `.deleteSelf` references to it, and queues each deletion.
    package func modifyRecords(
        _ operations: [CloudRecordOperation], atomically: Bool, failing failures: [CloudRecord.ID: CloudDatabaseError]
    ) async throws -> CloudModifyResults {
        try checkLimit(operations.count)
        // Refused before the transaction, so the caller gets CloudKit's error rather than the store's.
        if let refusal = CloudModificationPlan.refusal(of: operations) { throw refusal }
        guard !operations.isEmpty else { return ([:], [:]) }
        let (store, assets) = (store, store.assetFiles)
        // A file asset that can't be read fails its record alone (and its zone, atomically), as on a server. Checked,
        // not read: the store copies the files itself as it saves.
        let unreadable = AssetFileContents.failures(ofUnreadableFilesIn: operations.compactMap(\.recordToSave))
            .merging(failures) { unreadable, _ in unreadable }
        return try await store.write { db in
            let now = store.nextEditTime()
            let rules = LocalRecordStore(db: db)
            // The plan's change tags and dates are dropped: a record's system fields are its server copy's.
            let plan = try CloudModificationPlan(
                try operations.map { try Self.local($0, store: rules) }, atomically: atomically, store: rules,
                failures: unreadable, now: store.clock.now(), makeChangeTag: { "" })
            var changed = false
            let batch = SyncStore.sharedZoneBatch(plan.recordsToWrite)
            for var record in plan.recordsToWrite {
                // The plan's fields are the record's new fields; its system fields stay the server's.
                record.systemFields = nil
                if try SyncStore.applyLocalSave(record, at: now, assets: assets, batch: batch, in: db) {
                    changed = true
                }
            }
            if try !SyncStore.applyLocalDeletes(plan.recordIDsToRemove, in: db).isEmpty { changed = true }
            var saveResults = plan.saveResults
            // Only the request's records have results: a root the plan writes because its share went has none.
            for record in plan.recordsToWrite where saveResults[record.id] != nil {
                saveResults[record.id] =
                    try StoreTables.record(record.id, in: db).map {
                        .success(Self.asRead(SyncStore.serverCopy($0.record)))
                    }
                    ?? .failure(.unknownItem(record.id))
            }
            if changed { try StoreTables.noteLocalChange(in: db) }
            return (saveResults, plan.deleteResults)
        }
    }

    /// The item as the store applies it. A record saved without a change tag under `ifServerRecordUnchanged` (a
    /// `create`) updates the store's record when it has one, at the version the client read: a record the server
    /// hasn't had yet has no change tag, and a copy read without one matches it. Only a record the store lacks is
    /// created.
    private static func local(_ operation: CloudRecordOperation, store: LocalRecordStore) throws
        -> CloudRecordOperation
    {
        guard case .create(let record) = operation, try store.record(withID: record.id) != nil else { return operation }
        return .update(record)
    }

    /// The record as this database hands it out: one the server hasn't had yet comes with empty system fields (no
    /// change tag), because a `CloudRecord` notes a field set to `nil` as cleared only when it has system fields;
    /// so the app's clear reaches the store, while a copy read with `desiredKeys` keeps the fields it lacks.
    private static func asRead(_ record: CloudRecord) -> CloudRecord {
        guard record.systemFields == nil else { return record }
        var read = record
        read.systemFields = CloudRecord.SystemFields()
        return read
    }

    private func checkLimit(_ items: Int) throws {
        guard items <= maximumItemsPerRequest else {
            throw CloudDatabaseError.limitExceeded(limit: maximumItemsPerRequest, requested: items)
        }
    }

    /// The store's records of the query's type that match it, sorted, a page at a time; see
    /// `CloudRecordStoringDatabase`.
    package func queryPage(from cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int) async throws
        -> CloudQueryPage
    {
        let paging = try CloudQueryPaging(
            from: cursor, resultsLimit: resultsLimit, maximumItemsPerRequest: maximumItemsPerRequest)
        let query = cursor.query
        let matches = try await store.records(ofType: query.recordType, in: cursor.zoneID).lazy.filter {
            query.predicate.matches($0)
        }
        let (page, next) = paging.page(of: matches, record: { $0 }, continuing: cursor)
        return (page.map { ($0.id, .success(Self.asRead($0).keepingFields(desiredKeys))) }, next)
    }

    /// Refused: the synced zones are named in the engine's configuration.
    public func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults {
        throw CloudDatabaseError.invalidArguments(
            "the local store's zones are the synced zones: name them in the SyncEngine's configuration")
    }

    /// The zones the store has records in.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await store.read { db in
            try Row.fetchAll(db, sql: "SELECT DISTINCT zone_owner, zone_name FROM ncs_record ORDER BY 2, 1").map {
                CloudRecord.ZoneID(zoneName: $0["zone_name"], ownerName: $0["zone_owner"])
            }
        }
    }

    /// Refused: change tracking is the server's.
    public func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        throw Self.serverOnly("changes since a token")
    }

    /// Refused: change tracking is the server's.
    public func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws
        -> CloudDatabaseChanges
    {
        throw Self.serverOnly("changes since a token")
    }

    /// The user the store's data belongs to; `notAuthenticated` before the first sync.
    public func userRecordName() async throws -> String {
        guard let name = try await store.ledger.syncedUserRecordName() else {
            throw CloudDatabaseError.notAuthenticated
        }
        return name
    }

    /// `.available` once the store has synced for a user, else `.couldNotDetermine`.
    public func accountStatus() async throws -> CloudAccountStatus {
        try await store.ledger.syncedUserRecordName() == nil ? .couldNotDetermine : .available
    }

    /// Refused: subscriptions are the server's.
    public func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        throw Self.serverOnly("subscriptions")
    }

    /// Refused: subscriptions are the server's.
    public func allSubscriptions() async throws -> [CloudSubscription] {
        throw Self.serverOnly("subscriptions")
    }

    private static func serverOnly(_ feature: String) -> CloudDatabaseError {
        .invalidArguments(
            "the local store has no \(feature): ask the server's database, which the SyncEngine syncs with")
    }
}
