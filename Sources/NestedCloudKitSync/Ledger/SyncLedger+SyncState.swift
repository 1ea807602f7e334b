import Foundation
import GRDB
import NestedCloudKitCodable

/// What the store remembers about a synced zone.
struct ZoneState: Sendable {
    /// The zone's change token; `nil` before the first fetch and after an expiry.
    var token: CloudChangeToken?
    /// Whether the engine created the zone on the server (or found it there).
    var created: Bool
    /// For a zone without change tokens (the default zone, the public database): the latest modification date
    /// fetched, where the next fetch by date starts.
    var modifiedAfter: Date?
    /// When the set of the zone's records on the server was last compared with the local set.
    var lastFullCheck: Date?
    /// Which full fetch last saw each record: records the latest full fetch didn't see are gone from the server.
    var epoch: Int64
    /// Whether a full fetch began and hasn't reconciled yet: kept across failures and restarts, so a full fetch
    /// that was interrupted still deletes what the server lost once it reaches its end.
    var reconcilePending = false
    /// Whether the database's changes listed the zone as changed and its changes haven't all been fetched yet:
    /// kept with the database's token, so a sync that stops between the two still fetches the zone next time.
    var needsFetch = false
    /// Whether the store has no row for the zone: it never saved, fetched or synced anything there.
    var isUnknown = false
}

extension SyncLedger {
    static let userKey = "userRecordName"
    private static let databaseTokenKey = "databaseToken"
    private static let lastSyncKey = "lastSuccessfulSync"

    /// The user whose data the store holds; `nil` before the first sync.
    func syncedUserRecordName() async throws -> String? {
        try await read { db in
            try StoreTables.state(Self.userKey, in: db).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    func setSyncedUserRecordName(_ name: String?) async throws {
        try await write { db in try StoreTables.setState(Self.userKey, name.map { Data($0.utf8) }, in: db) }
    }

    /// The key of a database's change token: the private database's, or the shared database's.
    static func databaseTokenKey(_ scope: CloudNotification.DatabaseScope) -> String {
        scope == .shared ? "sharedDatabaseToken" : databaseTokenKey
    }

    func databaseToken(_ scope: CloudNotification.DatabaseScope = .private) async throws -> CloudChangeToken? {
        try await read { db in
            try StoreTables.state(Self.databaseTokenKey(scope), in: db).map(CloudChangeToken.init(data:))
        }
    }

    func setDatabaseToken(_ token: CloudChangeToken?, _ scope: CloudNotification.DatabaseScope = .private)
        async throws
    {
        try await write { db in try StoreTables.setState(Self.databaseTokenKey(scope), token?.data, in: db) }
    }

    /// The key of the subscription saved in a database: the private database's, or the shared database's.
    private static func subscriptionKey(_ scope: CloudNotification.DatabaseScope) -> String {
        scope == .shared ? "sharedSubscription" : "subscription"
    }

    func hasSavedSubscription(_ id: String, in scope: CloudNotification.DatabaseScope = .private) async throws -> Bool {
        try await read { db in
            try StoreTables.state(Self.subscriptionKey(scope), in: db).map { String(decoding: $0, as: UTF8.self) }
                == id
        }
    }

    /// The subscriptions belong to the account they were saved in: another account needs its own.
    func forgetSavedSubscription() async throws {
        try await write { db in
            try StoreTables.setState(Self.subscriptionKey(.private), nil, in: db)
            try StoreTables.setState(Self.subscriptionKey(.shared), nil, in: db)
        }
    }

    func setSavedSubscription(_ id: String, in scope: CloudNotification.DatabaseScope = .private) async throws {
        try await write { db in try StoreTables.setState(Self.subscriptionKey(scope), Data(id.utf8), in: db) }
    }

    /// When a sync last finished without an error.
    func lastSuccessfulSync() async throws -> Date? {
        try await read { db in try Self.lastSuccessfulSync(in: db) }
    }

    static func lastSuccessfulSync(in db: Database) throws -> Date? {
        try StoreTables.state(lastSyncKey, in: db)
            .flatMap { Double(String(decoding: $0, as: UTF8.self)) }
            .map(Date.init(timeIntervalSince1970:))
    }

    func setLastSuccessfulSync(_ date: Date) async throws {
        try await write { db in
            try StoreTables.setState(Self.lastSyncKey, Data(String(date.timeIntervalSince1970).utf8), in: db)
        }
    }

    func zoneState(_ zoneID: CloudRecord.ZoneID) async throws -> ZoneState {
        try await read { db in try Self.zoneState(zoneID, in: db) }
    }

    static func zoneState(_ zoneID: CloudRecord.ZoneID, in db: Database) throws -> ZoneState {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT * FROM ncs_zone WHERE zone_owner = ? AND zone_name = ?",
                arguments: [zoneID.ownerName, zoneID.zoneName])
        else {
            return ZoneState(
                token: nil, created: false, modifiedAfter: nil, lastFullCheck: nil, epoch: 0, isUnknown: true)
        }
        return ZoneState(
            token: (row["token"] as Data?).map(CloudChangeToken.init(data:)), created: row["created"],
            modifiedAfter: (row["modified_after"] as Double?).map(Date.init(timeIntervalSince1970:)),
            lastFullCheck: (row["last_full_check"] as Double?).map(Date.init(timeIntervalSince1970:)),
            epoch: row["fetch_epoch"], reconcilePending: row["reconcile_pending"], needsFetch: row["needs_fetch"])
    }

    static func setZoneState(_ zoneID: CloudRecord.ZoneID, _ state: ZoneState, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO ncs_zone (zone_owner, zone_name, token, created, modified_after, last_full_check,
                    fetch_epoch, reconcile_pending, needs_fetch)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                zoneID.ownerName, zoneID.zoneName, state.token?.data, state.created,
                state.modifiedAfter?.timeIntervalSince1970, state.lastFullCheck?.timeIntervalSince1970, state.epoch,
                state.reconcilePending, state.needsFetch,
            ])
    }

    func updateZoneState(
        _ zoneID: CloudRecord.ZoneID, _ change: @escaping @Sendable (inout ZoneState) -> Void
    ) async throws {
        try await write { db in
            var state = try Self.zoneState(zoneID, in: db)
            change(&state)
            try Self.setZoneState(zoneID, state, in: db)
        }
    }

    /// The zones the store has records or pending changes in, or syncs: every local write registers its zone
    /// (``registerZone(_:in:)``), so this reads a small table, not the records.
    func zonesWithData() async throws -> [CloudRecord.ZoneID] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT zone_owner, zone_name FROM ncs_zone ORDER BY zone_name, zone_owner")
                .map { CloudRecord.ZoneID(zoneName: $0["zone_name"], ownerName: $0["zone_owner"]) }
        }
    }

    /// Notes that the store has data in a zone; its current full-fetch epoch, so a record written during a full
    /// fetch counts as seen by it.
    @discardableResult
    static func registerZone(_ zoneID: CloudRecord.ZoneID, in db: Database) throws -> Int64 {
        // Nearly always known: one read in place, and an insertion only for a new zone.
        let arguments: StatementArguments = [zoneID.ownerName, zoneID.zoneName]
        if let epoch = try StatementValues.first(
            db.cachedStatement(sql: "SELECT fetch_epoch FROM ncs_zone WHERE zone_owner = ? AND zone_name = ?"),
            arguments: arguments, { try $0.int64(0) })
        {
            return epoch
        }
        return try StatementValues.first(
            db.cachedStatement(sql: "INSERT INTO ncs_zone (zone_owner, zone_name) VALUES (?, ?) RETURNING fetch_epoch"),
            arguments: arguments, { try $0.int64(0) }) ?? 0
    }

    /// How many changes wait for upload, how many of them are halted, and how many fetched records were skipped.
    func pendingCounts() async throws -> QueueState.Counts {
        try await read { db in try Self.pendingCounts(in: db) }
    }

    static func pendingCounts(in db: Database) throws -> QueueState.Counts {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT COUNT(*) AS pending, COALESCE(SUM(halted), 0) AS halted,
                    (SELECT COUNT(*) FROM ncs_skipped) AS skipped
                FROM ncs_outbox
                """)
        return QueueState.Counts(
            pending: row?["pending"] ?? 0, halted: row?["halted"] ?? 0, skipped: row?["skipped"] ?? 0)
    }

    /// The queue's counts and the last successful sync, now and after every transaction that changes them: what
    /// ``ObservedSyncState`` shows between the engine's events (a local save adds a pending change, say).
    func observeQueueState() -> StoreObservation<QueueState> {
        StoreObservation(writer: writer, removingDuplicates: { $0 == $1 }) { db in
            QueueState(counts: try Self.pendingCounts(in: db), lastSuccessfulSync: try Self.lastSuccessfulSync(in: db))
        }
    }

    // MARK: Zones deleted on the server

    /// Applies a page of the database's changes with the token that covers it, in one transaction: what each
    /// deleted zone's response says to do with its local copy, and which zones changed (fetched until done, even
    /// across syncs). Nothing of a page is applied twice, so a deletion is never replayed over what the app saved
    /// after it.
    ///
    /// - Parameters:
    ///   - deletions: The zones deleted, in order, each with what to do with its local copy.
    ///   - changedZones: The synced zones the page lists as changed.
    ///   - token: The database's token after the page.
    ///   - scope: Whose token it is: the private database's or the shared database's.
    func applyDatabaseChanges(
        deletions: [(zoneID: CloudRecord.ZoneID, response: ZoneDeletionResponse)],
        changedZones: [CloudRecord.ZoneID], token: CloudChangeToken, scope: CloudNotification.DatabaseScope = .private
    ) async throws {
        try await write { db in
            for (zoneID, response) in deletions {
                switch response {
                case .deleteLocalData: try Self.deleteLocalData(in: zoneID, db: db)
                case .reuploadLocalData: _ = try Self.prepareZoneForReupload(zoneID, db: db)
                }
            }
            for zoneID in changedZones {
                var state = try Self.zoneState(zoneID, in: db)
                state.needsFetch = true
                try Self.setZoneState(zoneID, state, in: db)
            }
            try StoreTables.setState(Self.databaseTokenKey(scope), token.data, in: db)
        }
    }

    /// The server lost the zone (deleted on another device, or an encrypted-data reset): every local record is
    /// queued to be created again, and pending deletions are done (there is nothing left to delete).
    func prepareZoneForReupload(_ zoneID: CloudRecord.ZoneID) async throws -> Int {
        try await write { db in try Self.prepareZoneForReupload(zoneID, db: db) }
    }

    private static func prepareZoneForReupload(_ zoneID: CloudRecord.ZoneID, db: Database) throws -> Int {
        try db.execute(
            sql: "DELETE FROM ncs_outbox WHERE zone_owner = ? AND zone_name = ? AND operation = 'delete'",
            arguments: [zoneID.ownerName, zoneID.zoneName])
        try StoreTables.noteChanged(StoreTables.queueTable, in: db)
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT record, ancestor, edit_time, field_edit_times, version FROM ncs_record
                WHERE zone_owner = ? AND zone_name = ?
                """,
            arguments: [zoneID.ownerName, zoneID.zoneName])
        var stored = try rows.map(StoreTables.storedRecord)
        // Targets before the records that reference them, as they were first saved.
        stored.sort { $0.version < $1.version }
        for var record in stored {
            record.record.systemFields = nil
            record.ancestor = nil
            let version = try StoreTables.write(record, in: db)
            try StoreTables.enqueue(
                .save, id: record.id, recordType: record.record.recordType, version: version, in: db)
        }
        try setZoneState(
            zoneID, ZoneState(token: nil, created: false, modifiedAfter: nil, lastFullCheck: nil, epoch: 0), in: db)
        return stored.count
    }

    /// The user deleted the zone's data: the local copy goes too, pending changes with it.
    func deleteLocalData(in zoneID: CloudRecord.ZoneID) async throws {
        try await write { db in try Self.deleteLocalData(in: zoneID, db: db) }
    }

    static func deleteLocalData(in zoneID: CloudRecord.ZoneID, db: Database) throws {
        let arguments: StatementArguments = [zoneID.ownerName, zoneID.zoneName]
        // References first: then the triggers of each deleted record (ncs_record_reference_rows_removed) find
        // none to update.
        try db.execute(
            sql: "DELETE FROM ncs_reference WHERE holder_zone_owner = ? AND holder_zone_name = ?",
            arguments: arguments)
        try db.execute(sql: "DELETE FROM ncs_record WHERE zone_owner = ? AND zone_name = ?", arguments: arguments)
        try db.execute(sql: "DELETE FROM ncs_outbox WHERE zone_owner = ? AND zone_name = ?", arguments: arguments)
        // The copies of the zone's assets go with the transaction: the rows' triggers let go of them
        // (AssetFiles.collectGarbage).
        try db.execute(sql: "DELETE FROM ncs_skipped WHERE zone_owner = ? AND zone_name = ?", arguments: arguments)
        try db.execute(sql: "DELETE FROM ncs_zone WHERE zone_owner = ? AND zone_name = ?", arguments: arguments)
        for table in [StoreTables.queueTable, StoreTables.skippedTable] { try StoreTables.noteChanged(table, in: db) }
    }
}

/// The store's part of the sync's state: what waits for upload, and when a sync last succeeded.
struct QueueState: Sendable, Equatable {
    /// How many changes wait, how many of them are halted, and how many fetched records were skipped.
    struct Counts: Sendable, Equatable {
        var pending: Int
        var halted: Int
        var skipped: Int
    }

    var counts: Counts
    var lastSuccessfulSync: Date?
}
