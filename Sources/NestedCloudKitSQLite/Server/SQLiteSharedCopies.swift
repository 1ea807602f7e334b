import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer

/// Keeps each user's shared database a copy of what the shares they accepted cover, one refresh at a time.
///
/// The owners' files are the truth; a copy is brought up to date from them after every change to a shared zone.
/// Refreshes run one at a time, each reading the owner's file when it starts: so the last one after a write always
/// reads that write, and two refreshes never interleave their copies.
final class SQLiteSharedCopies: @unchecked Sendable {
    // Held for a whole refresh, which blocks on SQLite and never suspends.
    private let lock = NSLock()
    /// The users whose shared database shows each zone, as they name it: those a refresh must look at even once no
    /// share lists them any more.
    private var viewers: [CloudRecord.ZoneID: Set<String>] = [:]
    // Guards `changedByOthers` and `pending`, briefly: taken inside `lock`, never the other way round, so that a
    // caller asking what changed doesn't wait for a refresh.
    private let stateLock = NSLock()
    /// The databases another user's request changed since ``takeChangedByOthers()`` was last called.
    private var changedByOthers: Set<SharedDatabaseRules.ChangedDatabase> = []
    /// Zones a refresh failed for, refreshed whole with the next refresh or read of a shared database.
    private var pending: Set<OwnedZone> = []

    private struct OwnedZone: Hashable {
        var owner: String
        var zone: CloudRecord.ZoneID
    }

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
                    viewers[zone, default: []].insert(viewer)
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

    /// Brings up to date the shared database of every user who may see one of these zones of `owner`: the
    /// participants who accepted one of its shares, and the users whose shared database shows it now. Each zone's
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
                let owned = OwnedZone(owner: owner, zone: zone)
                due[owned] = due[owned] == nil ? change : .everything
            }
            for (owned, change) in due.sorted(by: {
                ($0.key.owner, $0.key.zone.zoneName) < ($1.key.owner, $1.key.zone.zoneName)
            }) {
                do {
                    if change.reshaped {
                        try refreshWhole(owned.zone, ownedBy: owned.owner, files: files, now: now)
                    } else {
                        try refresh(owned.zone, ownedBy: owned.owner, after: change, files: files, now: now)
                    }
                } catch {
                    stateLock.withLock { _ = pending.insert(owned) }
                }
            }
        }
    }

    /// Brings one zone of `owner` up to date in its viewers' copies after a write that changed who sees only the
    /// records it wrote: only those are looked at, so a write to a large shared zone costs what it wrote.
    private func refresh(
        _ zone: CloudRecord.ZoneID, ownedBy owner: String, after change: SharedZoneChange, files: SQLiteServerFiles,
        now: Date
    ) throws {
        let sharedZone = zone.sharedName(ownedBy: owner)
        let toShared = { (zone: CloudRecord.ZoneID) in zone.sharedName(ownedBy: owner) }
        let ownerFile = try files.file(of: owner, .private)
        let showing = viewers[sharedZone] ?? []
        let update = try ownerFile.readNow { database -> IncrementalUpdate? in
            let store = SQLiteRecordStore(database: database, assets: ownerFile.assets)
            let shares = try store.shares(in: zone)
            // A zone nobody else sees (most of a user's zones) needs nothing more. Without shares but with copies
            // left, the whole refresh is cheap: it reads no record and empties them.
            if shares.isEmpty { return showing.subtracting([owner]).isEmpty ? IncrementalUpdate() : nil }
            var viewers = SharedDatabaseRules.participants(of: shares).union(showing)
            viewers.remove(owner)
            guard !viewers.isEmpty else { return IncrementalUpdate() }
            // A record written and then deleted by a later write is gone here: it is removed from the copies.
            let records = try change.written.sorted().compactMap {
                try store.record(withID: CloudRecord.ID(recordName: $0, zoneID: zone))
            }
            let lines = SkeletonLookup(store: store)
            var update = IncrementalUpdate()
            for viewer in viewers {
                update.visible[viewer] = Set(
                    try records.filter {
                        try ShareAccess.permission(of: viewer, on: $0.id, in: lines, shares: shares) != nil
                    }.map(\.id.recordName))
            }
            update.records = records
            let withAssets = records.filter { record in record.fields.contains { !$0.value.assets.isEmpty } }
            update.contents = try store.assetContents(of: withAssets.map(\.id))
            return update
        }
        // A viewer whose copy doesn't show the zone yet gets all of it, not only what this write touched.
        guard let update, update.visible.allSatisfy({ $0.value.isEmpty || showing.contains($0.key) }) else {
            return try refreshWhole(zone, ownedBy: owner, files: files, now: now)
        }
        let touched = change.written.union(change.removed)
        try eachViewer(update.visible) { viewer, visible in
            let viewerFile = try files.file(of: viewer, .shared)
            let shown = update.records.filter { visible.contains($0.id.recordName) }
            let contents = update.contents.filter { visible.contains($0.key.recordID.recordName) }
            let (changed, zoneShown) = try viewerFile.update(
                writing: shown.map { $0.movingZones(toShared) }, removing: touched.subtracting(visible),
                in: sharedZone,
                contents: Dictionary(
                    contents.map { ($0.key.movingZone(toShared), $0.value) }, uniquingKeysWith: { first, _ in first }),
                now: now)
            if changed { noteChangedByOthers(.init(userRecordName: viewer, scope: .shared)) }
            if zoneShown {
                viewers[sharedZone, default: []].insert(viewer)
            } else {
                viewers[sharedZone]?.remove(viewer)
            }
        }
    }

    /// Runs `body` for each viewer, in order, going on past one that fails (a copy that can't be written mustn't keep
    /// the others from losing what they no longer see); throws the first failure at the end, so that the zone is
    /// refreshed again.
    private func eachViewer<Visible>(
        _ visible: [String: Visible], _ body: (String, Visible) throws -> Void
    ) throws {
        var failure: (any Error)?
        for (viewer, shown) in visible.sorted(by: { $0.key < $1.key }) {
            do {
                try body(viewer, shown)
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
    }

    /// What an incremental refresh writes: the names each viewer sees among the records written, those records,
    /// and their assets' contents.
    private struct IncrementalUpdate {
        var visible: [String: Set<String>] = [:]
        var records: [CloudRecord] = []
        var contents: [AssetKey: Data] = [:]
    }

    /// Brings one zone of `owner` up to date in its viewers' copies, whole.
    ///
    /// Who sees what is worked out from the zone's skeletons (parents and shares, read by SQLite from the stored
    /// JSON), and only the records new or changed in a copy are decoded and written: a write to a large shared
    /// zone costs a scan of it, not a decoding of it.
    private func refreshWhole(_ zone: CloudRecord.ZoneID, ownedBy owner: String, files: SQLiteServerFiles, now: Date)
        throws
    {
        let sharedZone = zone.sharedName(ownedBy: owner)
        let toShared = { (zone: CloudRecord.ZoneID) in zone.sharedName(ownedBy: owner) }
        let ownerFile = try files.file(of: owner, .private)
        let showing = viewers[sharedZone] ?? []
        let shown = try ownerFile.readNow { database -> [String: [String: String]] in
            let store = SQLiteRecordStore(database: database, assets: ownerFile.assets)
            let shares = try store.shares(in: zone)
            var viewers = SharedDatabaseRules.participants(of: shares).union(showing)
            viewers.remove(owner)
            guard !viewers.isEmpty else { return [:] }
            let skeletons = shares.isEmpty ? [] : try store.skeletons(in: zone)
            let lines = SkeletonStore(skeletons)
            var shown: [String: [String: String]] = [:]
            for viewer in viewers {
                var visible: [String: String] = [:]
                for record in skeletons
                where (try? ShareAccess.permission(of: viewer, on: record.id, in: lines, shares: shares)) != nil {
                    visible[record.id.recordName] = record.systemFields?.changeTag ?? ""
                }
                shown[viewer] = visible
            }
            return shown
        }
        try eachViewer(shown) { viewer, visible in
            let viewerFile = try files.file(of: viewer, .shared)
            // Only this refresh writes the copy, so its tags can't change before the write below.
            let tags = try viewerFile.readNow { database in
                try SQLiteRecordStore(database: database, assets: viewerFile.assets).changeTags(in: sharedZone)
            }
            let changed = visible.filter { tags[$0.key] != $0.value }.keys.sorted()
            // Read after the skeletons: a record changed since is written in its newer version, and one deleted
            // since is left to the refresh that follows its deletion.
            let (records, contents) = try ownerFile.readNow { database in
                let store = SQLiteRecordStore(database: database, assets: ownerFile.assets)
                let records = try changed.compactMap {
                    try store.record(withID: CloudRecord.ID(recordName: $0, zoneID: zone))
                }
                let withAssets = records.filter { record in record.fields.contains { !$0.value.assets.isEmpty } }
                return (records, try store.assetContents(of: withAssets.map(\.id)))
            }
            let sharedContents = Dictionary(
                contents.map { ($0.key.movingZone(toShared), $0.value) }, uniquingKeysWith: { first, _ in first })
            let wasChanged = try viewerFile.show(
                Set(visible.keys), writing: records.map { $0.movingZones(toShared) }, in: sharedZone,
                contents: sharedContents, now: now)
            if wasChanged { noteChangedByOthers(.init(userRecordName: viewer, scope: .shared)) }
            if visible.isEmpty {
                viewers[sharedZone]?.remove(viewer)
            } else {
                viewers[sharedZone, default: []].insert(viewer)
            }
        }
    }
}

/// A zone's records as the share rules read them (``SQLiteRecordStore/skeletons(in:)``), for the lines of parents.
private struct SkeletonStore: CloudRecordStore {
    let records: [CloudRecord.ID: CloudRecord]

    init(_ skeletons: [CloudRecord]) {
        records = Dictionary(skeletons.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func record(withID id: CloudRecord.ID) -> CloudRecord? { records[id] }
    func ancestor(of id: CloudRecord.ID, changeTag: String) -> CloudRecord? { nil }
    func referenceHolders(of id: CloudRecord.ID) -> [(holder: CloudRecord.ID, action: CloudReference.Action)] { [] }
    func containsZone(_ zoneID: CloudRecord.ZoneID) -> Bool { true }
}

/// Records as the share rules read them, one at a time from the file (``SQLiteRecordStore/skeleton(of:)``), for
/// the lines of parents of a few records.
private final class SkeletonLookup: CloudRecordStore {
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
}
