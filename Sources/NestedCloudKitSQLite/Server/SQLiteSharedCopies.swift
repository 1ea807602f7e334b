import Foundation
import GRDB
import NestedCloudKitCodable

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
    /// The databases another user's request changed since ``takeChangedByOthers()`` was last called.
    private var changedByOthers: Set<SharedDatabaseRules.ChangedDatabase> = []

    /// Notes a database another user's request changed.
    func noteChangedByOthers(_ database: SharedDatabaseRules.ChangedDatabase) {
        lock.withLock { _ = changedByOthers.insert(database) }
    }

    /// The databases other users' requests changed since the last call.
    func takeChangedByOthers() -> Set<SharedDatabaseRules.ChangedDatabase> {
        lock.withLock {
            defer { changedByOthers = [] }
            return changedByOthers
        }
    }

    /// Learns which zones the shared databases left by an earlier run show, and brings every copy up to date: a
    /// process killed between an owner's write and its refresh left them behind.
    func recover(files: SQLiteServerFiles, now: Date) throws {
        var zonesByOwner: [String: Set<CloudRecord.ZoneID>] = [:]
        try lock.withLock {
            for viewer in files.users(.shared) {
                let zones = try files.file(of: viewer, .shared).readNow { database in
                    try Row.fetchAll(database, sql: "SELECT zone_name, owner_name FROM zone")
                        .map { CloudRecord.ZoneID(zoneName: $0[0], ownerName: $0[1]) }
                }
                for zone in zones {
                    viewers[zone, default: []].insert(viewer)
                    zonesByOwner[zone.ownerName, default: []].insert(zone.ownersName(ownedBy: zone.ownerName))
                }
            }
        }
        for owner in files.users(.private) {
            let file = try files.file(of: owner, .private)
            let shared = try file.readNow { database in
                try SQLiteRecordStore(database: database, assets: file.assets).allShares().map(\.id.zoneID)
            }
            zonesByOwner[owner, default: []].formUnion(shared)
        }
        for (owner, zones) in zonesByOwner.sorted(by: { $0.key < $1.key }) {
            refresh(zones: Array(zones), ownedBy: owner, files: files, now: now)
        }
    }

    /// Brings up to date the shared database of every user who may see one of these zones of `owner`: the
    /// participants who accepted one of its shares, and the users whose shared database shows it now.
    ///
    /// A zone whose refresh fails (a file that can't be written just now) is tried again with the next refresh,
    /// and at the next open: the owner's write it follows has succeeded, and the copy catches up.
    func refresh(zones: [CloudRecord.ZoneID], ownedBy owner: String, files: SQLiteServerFiles, now: Date) {
        lock.withLock {
            var due = pending
            pending = []
            for zone in zones where zone != .default { due.insert(OwnedZone(owner: owner, zone: zone)) }
            for owned in due.sorted(by: { ($0.owner, $0.zone.zoneName) < ($1.owner, $1.zone.zoneName) }) {
                do {
                    try refresh(owned.zone, ownedBy: owned.owner, files: files, now: now)
                } catch {
                    pending.insert(owned)
                }
            }
        }
    }

    /// Zones whose last refresh failed, tried again with the next.
    private var pending: Set<OwnedZone> = []

    private struct OwnedZone: Hashable {
        var owner: String
        var zone: CloudRecord.ZoneID
    }

    private func refresh(_ zone: CloudRecord.ZoneID, ownedBy owner: String, files: SQLiteServerFiles, now: Date)
        throws
    {
        let sharedZone = zone.sharedName(ownedBy: owner)
        let ownerFile = try files.file(of: owner, .private)
        let showing = viewers[sharedZone] ?? []
        let shown = try ownerFile.readNow { database -> [String: [CloudRecord]] in
            let store = SQLiteRecordStore(database: database, assets: ownerFile.assets)
            let shares = try store.shares(in: zone)
            var viewers = SharedDatabaseRules.participants(of: shares).union(showing)
            viewers.remove(owner)
            let records = shares.isEmpty ? [] : try store.records(in: zone)
            return Dictionary(
                uniqueKeysWithValues: viewers.map { viewer in
                    (
                        viewer,
                        SharedDatabaseRules.recordsShown(
                            to: viewer, of: records, ownedBy: owner, shares: shares, in: store)
                    )
                })
        }
        for (viewer, visible) in shown.sorted(by: { $0.key < $1.key }) {
            let viewerFile = try files.file(of: viewer, .shared)
            // Only the assets of records new or changed in the copy are read from the owner's file. Only this
            // refresh writes the copy, so its tags can't change before the write below.
            let tags = try viewerFile.readNow { database in
                try SQLiteRecordStore(database: database, assets: viewerFile.assets).changeTags(in: sharedZone)
            }
            let needingContents = visible.filter { record in
                tags[record.id.recordName] != record.systemFields?.changeTag
                    && record.fields.contains { !$0.value.assets.isEmpty }
            }
            let contents = try ownerFile.readNow { database in
                try SQLiteRecordStore(database: database, assets: ownerFile.assets)
                    .assetContents(of: needingContents.map { $0.id.movingZone { $0.ownersName(ownedBy: owner) } })
            }
            let sharedContents = Dictionary(
                contents.map { ($0.key.movingZone { $0.sharedName(ownedBy: owner) }, $0.value) },
                uniquingKeysWith: { first, _ in first })
            if try viewerFile.show(visible, in: sharedZone, contents: sharedContents, now: now) {
                changedByOthers.insert(.init(userRecordName: viewer, scope: .shared))
            }
            if visible.isEmpty {
                viewers[sharedZone]?.remove(viewer)
            } else {
                viewers[sharedZone, default: []].insert(viewer)
            }
        }
    }
}
