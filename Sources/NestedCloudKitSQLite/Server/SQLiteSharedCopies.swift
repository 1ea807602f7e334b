import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer

/// The SQLite server's shared copies: the one refresh (`SharedCopies`) over the server's files, one refresh at a
/// time, with what a server of files adds: a refresh that failed is retried, and the copies an earlier run left are
/// caught up when the server opens.
///
/// Refreshes run one at a time, each reading the owner's file when it starts: so the last one after a write always
/// reads that write, and two refreshes never interleave their copies.
final class SQLiteSharedCopies: @unchecked Sendable {
    // Held for a whole refresh, which blocks on SQLite and never suspends.
    private let lock = NSLock()
    private var copies = SharedCopies()
    // Guards `changedByOthers` and `pending`, briefly: taken inside `lock`, never the other way round, so that a
    // caller asking what changed doesn't wait for a refresh.
    private let stateLock = NSLock()
    /// The databases another user's request changed since ``takeChangedByOthers()`` was last called.
    private var changedByOthers: Set<SharedDatabaseRules.ChangedDatabase> = []
    /// Zones a refresh failed for, refreshed whole with the next refresh or read of a shared database.
    private var pending: Set<SharedCopies.OwnedZone> = []

    /// Notes a database another user's request changed.
    func noteChangedByOthers(_ database: SharedDatabaseRules.ChangedDatabase) {
        stateLock.withLock { _ = changedByOthers.insert(database) }
    }

    /// The databases other users' requests changed since the last call.
    func takeChangedByOthers() -> Set<SharedDatabaseRules.ChangedDatabase> {
        stateLock.withLock {
            defer { changedByOthers = [] }
            return changedByOthers
        }
    }

    /// Refreshes the zones whose refresh failed, if any: a shared database's reads ask first, so that a copy a
    /// failure left behind isn't read as it is.
    func retryPending(files: SQLiteServerFiles, now: Date) {
        guard stateLock.withLock({ !pending.isEmpty }) else { return }
        refresh([:], ownedBy: "", files: files, now: now)
    }

    /// Learns which zones the shared databases left by an earlier run show, and brings every copy up to date: a
    /// process killed between an owner's write and its refresh left them behind.
    func recover(files: SQLiteServerFiles, now: Date) {
        var zonesByOwner: [String: Set<CloudRecord.ZoneID>] = [:]
        // A file that can't be read here is skipped: it fails its own user's requests, not everyone's.
        lock.withLock {
            for viewer in files.users(.shared) {
                guard let file = try? files.file(of: viewer, .shared),
                    let zones = try? file.readNow({ database in
                        try Row.fetchAll(database, sql: "SELECT zone_name, owner_name FROM zone")
                            .map { CloudRecord.ZoneID(zoneName: $0[0], ownerName: $0[1]) }
                    })
                else { continue }
                for zone in zones {
                    copies.noteShown(zone, by: viewer)
                    zonesByOwner[zone.ownerName, default: []].insert(zone.ownersName(ownedBy: zone.ownerName))
                }
            }
        }
        for owner in files.users(.private) {
            guard let file = try? files.file(of: owner, .private),
                let shared = try? file.readNow({ database in
                    try SQLiteRecordStore(database: database, assets: file.assets).allShares().map(\.id.zoneID)
                })
            else { continue }
            zonesByOwner[owner, default: []].formUnion(shared)
        }
        for (owner, zones) in zonesByOwner.sorted(by: { $0.key < $1.key }) {
            refresh(
                Dictionary(zones.map { ($0, SharedZoneChange.everything) }, uniquingKeysWith: { $1 }), ownedBy: owner,
                files: files, now: now)
        }
    }

    /// Brings up to date the shared database of every user who may see one of these zones of `owner`. Each zone's
    /// change says what the write changed there; a zone without one is refreshed whole.
    ///
    /// A zone whose refresh fails (a file that can't be written just now) is refreshed whole with the next refresh,
    /// and at the next open: the owner's write it follows has succeeded, and the copy catches up.
    func refresh(
        _ changes: [CloudRecord.ZoneID: SharedZoneChange], ownedBy owner: String, files: SQLiteServerFiles, now: Date
    ) {
        let relevant = changes.filter { $0.key != .default }
        guard !relevant.isEmpty || stateLock.withLock({ !pending.isEmpty }) else { return }
        lock.withLock {
            let failed = stateLock.withLock {
                defer { pending = [] }
                return pending
            }
            var due = Dictionary(failed.map { ($0, SharedZoneChange.everything) }, uniquingKeysWith: { $1 })
            for (zone, change) in relevant {
                let owned = SharedCopies.OwnedZone(owner: owner, zone: zone)
                due[owned] = due[owned] == nil ? change : .everything
            }
            var storage = SQLiteCopyStorage(files: files, now: now)
            let outcome = copies.refresh(due, in: &storage)
            stateLock.withLock {
                for (viewer, _) in outcome.changed {
                    changedByOthers.insert(.init(userRecordName: viewer, scope: .shared))
                }
                pending.formUnion(outcome.failed)
            }
        }
    }
}

/// The server's files as the refresh of shared copies reads and writes them.
private struct SQLiteCopyStorage: SharedCopyStorage {
    let files: SQLiteServerFiles
    let now: Date

    func readOwner<T>(_ owner: String, _ body: (SQLiteCopySource) throws -> T) throws -> T {
        let file = try files.file(of: owner, .private)
        return try file.readNow { database in
            try body(SQLiteCopySource(store: SQLiteRecordStore(database: database, assets: file.assets)))
        }
    }

    func changeTags(of viewer: String, in sharedZone: CloudRecord.ZoneID) throws -> [String: String] {
        let file = try files.file(of: viewer, .shared)
        return try file.readNow { database in
            try SQLiteRecordStore(database: database, assets: file.assets).changeTags(in: sharedZone)
        }
    }

    func show(
        _ visible: Set<String>, writing copies: SQLiteCopies, in sharedZone: CloudRecord.ZoneID, to viewer: String
    ) throws -> Bool {
        try files.file(of: viewer, .shared).show(
            visible, writing: copies.records, in: sharedZone, contents: copies.contents, now: now)
    }

    func update(
        writing copies: SQLiteCopies, removing removed: Set<String>, in sharedZone: CloudRecord.ZoneID,
        for viewer: String
    ) throws -> (changed: Bool, shown: Bool) {
        try files.file(of: viewer, .shared).update(
            writing: copies.records, removing: removed, in: sharedZone, contents: copies.contents, now: now)
    }
}

/// Records of an owner's file and their assets' contents, for a viewer's file.
private struct SQLiteCopies: SharedRecordCopies {
    var records: [CloudRecord]
    var contents: [AssetKey: Data]

    func keeping(_ names: Set<String>) -> SQLiteCopies {
        SQLiteCopies(
            records: records.filter { names.contains($0.id.recordName) },
            contents: contents.filter { names.contains($0.key.recordID.recordName) })
    }
}

/// An owner's file in one read: a record's line of parents read one record at a time, as the share rules ask for
/// it, from the stored skeletons (parents and shares, read by SQLite from the stored JSON).
private final class SQLiteCopySource: SharedCopySource {
    let store: SQLiteRecordStore
    private var known: [CloudRecord.ID: CloudRecord?] = [:]

    init(store: SQLiteRecordStore) {
        self.store = store
    }

    func record(withID id: CloudRecord.ID) throws -> CloudRecord? {
        if let record = known[id] { return record }
        let record = try store.skeleton(of: id)
        known[id] = .some(record)
        return record
    }

    func ancestor(of id: CloudRecord.ID, changeTag: String) -> CloudRecord? { nil }
    func referenceHolders(of id: CloudRecord.ID) -> [(holder: CloudRecord.ID, action: CloudReference.Action)] { [] }
    func containsZone(_ zoneID: CloudRecord.ZoneID) -> Bool { true }

    func shares(in zone: CloudRecord.ZoneID) throws -> [CloudRecord] { try store.shares(in: zone) }
    func skeletons(in zone: CloudRecord.ZoneID) throws -> [CloudRecord] { try store.skeletons(in: zone) }

    func copies(of ids: [CloudRecord.ID], sharedBy owner: String) throws -> SQLiteCopies {
        let records = try ids.compactMap { try store.record(withID: $0) }
        let withAssets = records.filter { record in record.fields.contains { !$0.value.assets.isEmpty } }
        let toShared = { (zone: CloudRecord.ZoneID) in zone.sharedName(ownedBy: owner) }
        return SQLiteCopies(
            records: records.map { $0.movingZones(toShared) },
            contents: Dictionary(
                try store.assetContents(of: withAssets.map(\.id)).map { ($0.key.movingZone(toShared), $0.value) },
                uniquingKeysWith: { first, _ in first }))
    }
}
