import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

/// Keeps each user's shared database a copy of what the shares they accepted cover, over any storage engine.
///
/// The owners' databases are the truth; a copy is brought up to date from them after every change to a shared zone,
/// whoever makes it. A change that says which records a write touched, and can't change who sees the others
/// (``SharedZoneChange``), is applied by those records alone, so a write to a large shared zone costs what it wrote;
/// any other refreshes the zone whole, from its records' skeletons, writing only the records new or changed in each
/// copy. So a record a share stops covering (the user removed, the share deleted, the record moved out of the
/// hierarchy) is a deletion in the user's zone changes, and a zone they no longer see any record of is a deletion in
/// their database changes, as CloudKit reports losing access.
///
/// Refreshes take turns (an ``AsyncSerialLock``), each reading the owner's database when it starts: so the last one
/// after a write always reads that write, and two refreshes never interleave their copies. A refresh waits for the
/// storage without blocking a thread: nothing holds a thread lock across its reads and writes. A zone whose refresh
/// fails (a file that can't be written just now) is refreshed whole with the next refresh, or before a shared
/// database is read.
package actor SharedCopies<Engine: CloudStorageEngine> {
    /// A zone of an owner's, by the owner's name for it.
    package struct OwnedZone: Hashable, Sendable {
        package var owner: String
        package var zone: CloudRecord.ZoneID
    }

    /// What a refresh did: each viewer's copy that changed, by the zone as the viewer names it.
    package typealias Changed = [(viewer: String, sharedZone: CloudRecord.ZoneID)]

    private let engine: Engine
    private let turns = AsyncSerialLock()
    /// The users whose shared database shows each zone, as they name it: those a refresh must look at even once no
    /// share lists them any more.
    private var viewers: [CloudRecord.ZoneID: Set<String>] = [:]
    /// Zones a refresh failed for, refreshed whole with the next refresh or read of a shared database.
    private var pending: Set<OwnedZone> = []
    /// Whether the copies an earlier run left are still to be looked at, with the first refresh.
    private var recovering: Bool
    /// The refreshes waiting for their turn or running: a shared read waits for them, since a turn takes its due
    /// zones (and clears `recovering`) before it has refreshed them.
    private var refreshesUnderWay = 0

    /// - Parameter recovering: Whether the storage holds copies an earlier run left, which the first refresh (or
    ///   read of a shared database) brings up to date: a process killed between an owner's write and its refresh
    ///   left them behind.
    package init(engine: Engine, recovering: Bool) {
        self.engine = engine
        self.recovering = recovering
    }

    /// Whether a refresh is owed or under way before a shared database is read: one failed, one is running, or an
    /// earlier run's copies haven't been looked at yet.
    package var isBehind: Bool { recovering || !pending.isEmpty || refreshesUnderWay > 0 }

    /// Brings up to date what a failed refresh or an earlier run left, before a shared database is read.
    package func catchUp() async -> Changed {
        isBehind ? await refresh([:], ownedBy: "") : []
    }

    /// Brings up to date the copies of every user who may see one of these zones of `owner`: the participants who
    /// accepted one of its shares, and the users whose copy shows it now; and the zones a failed refresh left. Each
    /// zone's change says what the write changed there.
    package func refresh(_ changes: [CloudRecord.ZoneID: SharedZoneChange], ownedBy owner: String) async -> Changed {
        let relevant = changes.filter { $0.key != .default }
        guard !relevant.isEmpty || isBehind else { return [] }
        refreshesUnderWay += 1
        defer { refreshesUnderWay -= 1 }
        return await turns.withLock { await self.refreshInTurn(relevant, ownedBy: owner) }
    }

    private func refreshInTurn(_ changes: [CloudRecord.ZoneID: SharedZoneChange], ownedBy owner: String) async
        -> Changed
    {
        if recovering { await recoverInTurn() }
        var due = Dictionary(pending.map { ($0, SharedZoneChange.everything) }, uniquingKeysWith: { $1 })
        pending = []
        for (zone, change) in changes {
            let owned = OwnedZone(owner: owner, zone: zone)
            due[owned] = due[owned] == nil ? change : .everything
        }
        var changed: Changed = []
        for (owned, change) in due.sorted(by: { Self.precedes($0.key, $1.key) }) {
            do {
                if change.reshaped {
                    try await refreshWhole(owned, into: &changed)
                } else {
                    try await refresh(owned, after: change, into: &changed)
                }
            } catch {
                pending.insert(owned)
            }
        }
        return changed
    }

    /// Learns which zones the shared databases an earlier run left show, and marks them, and every zone an owner
    /// shares, to be refreshed whole. A database that can't be read is skipped: it fails its own user's requests,
    /// not everyone's.
    private func recoverInTurn() async {
        recovering = false
        for viewer in (try? engine.users(.shared)) ?? [] {
            guard let zones = try? await engine.read(.sharedDatabase(of: viewer), { try $0.zones() }) else { continue }
            for zone in zones {
                viewers[zone, default: []].insert(viewer)
                pending.insert(OwnedZone(owner: zone.ownerName, zone: zone.ownersName(ownedBy: zone.ownerName)))
            }
        }
        for owner in (try? engine.users(.private)) ?? [] {
            guard let shares = try? await engine.read(.privateDatabase(of: owner), { try $0.allShares() }) else {
                continue
            }
            pending.formUnion(shares.map { OwnedZone(owner: owner, zone: $0.id.zoneID) })
        }
    }

    private static func precedes(_ first: OwnedZone, _ second: OwnedZone) -> Bool {
        (first.owner, first.zone.zoneName, first.zone.ownerName) < (
            second.owner, second.zone.zoneName, second.zone.ownerName
        )
    }

    /// What an incremental refresh writes: the names each viewer sees among the records written, and their copies.
    private struct IncrementalUpdate: Sendable {
        var visible: [String: Set<String>] = [:]
        var copies: SharedRecordCopies?
    }

    /// Brings one zone up to date in its viewers' copies after a write that changed who sees only the records it
    /// wrote: only those are looked at.
    private func refresh(_ owned: OwnedZone, after change: SharedZoneChange, into changed: inout Changed) async throws {
        let (owner, zone) = (owned.owner, owned.zone)
        let sharedZone = zone.sharedName(ownedBy: owner)
        let showing = viewers[sharedZone] ?? []
        let update = try await engine.read(.privateDatabase(of: owner)) { owners -> IncrementalUpdate? in
            let shares = try owners.shares(in: zone)
            // A zone nobody else sees (most of a user's zones) needs nothing more. Without shares but with copies
            // left, the whole refresh is cheap: it reads no record and empties them.
            if shares.isEmpty { return showing.subtracting([owner]).isEmpty ? IncrementalUpdate() : nil }
            var viewers = SharedDatabaseRules.participants(of: shares).union(showing)
            viewers.remove(owner)
            guard !viewers.isEmpty else { return IncrementalUpdate() }
            // A record written and then deleted by a later write is gone here: it is removed from the copies.
            let copies = try owners.copies(
                of: change.written.sorted().map { CloudRecord.ID(recordName: $0, zoneID: zone) }, sharedBy: owner)
            let lines = SkeletonLines(owners)
            var update = IncrementalUpdate(copies: copies)
            for viewer in viewers {
                update.visible[viewer] = Set(
                    try copies.records.map(\.id.recordName).filter { name in
                        try ShareAccess.permission(
                            of: viewer, on: CloudRecord.ID(recordName: name, zoneID: zone), in: lines, shares: shares)
                            != nil
                    })
            }
            return update
        }
        // A viewer whose copy doesn't show the zone yet gets all of it, not only what this write touched.
        guard let update, update.visible.allSatisfy({ $0.value.isEmpty || showing.contains($0.key) }) else {
            return try await refreshWhole(owned, into: &changed)
        }
        guard let copies = update.copies else { return }
        let touched = change.written.union(change.removed)
        try await eachViewer(update.visible) { viewer, visible in
            let (updated, shown) = try await self.update(
                writing: copies.keeping(visible), removing: touched.subtracting(visible), in: sharedZone, for: viewer)
            if updated { changed.append((viewer, sharedZone)) }
            self.note(sharedZone, shownBy: viewer, shown)
        }
    }

    /// Brings one zone up to date in its viewers' copies, whole. Who sees what is worked out from the zone's
    /// skeletons, and only the records new or changed in a copy are copied: a write to a large shared zone costs a
    /// pass over it, not a copy of it.
    private func refreshWhole(_ owned: OwnedZone, into changed: inout Changed) async throws {
        let (owner, zone) = (owned.owner, owned.zone)
        let sharedZone = zone.sharedName(ownedBy: owner)
        let showing = viewers[sharedZone] ?? []
        let shown = try await engine.read(.privateDatabase(of: owner)) { owners -> [String: [String: String]] in
            let shares = try owners.shares(in: zone)
            var viewers = SharedDatabaseRules.participants(of: shares).union(showing)
            viewers.remove(owner)
            guard !viewers.isEmpty else { return [:] }
            let skeletons = shares.isEmpty ? [] : try owners.skeletons(in: zone)
            let lines = SkeletonLines(skeletons)
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
        try await eachViewer(shown) { viewer, visible in
            // Only this refresh writes the copy, so its tags can't change before the write below.
            let tags = try await self.engine.read(.sharedDatabase(of: viewer)) { try $0.changeTags(in: sharedZone) }
            let new = visible.filter { tags[$0.key] != $0.value }.keys.sorted()
            // Read after the skeletons: a record changed since is written in its newer version, and one deleted
            // since is left to the refresh that follows its deletion.
            let copies = try await self.engine.read(.privateDatabase(of: owner)) { owners in
                try owners.copies(of: new.map { CloudRecord.ID(recordName: $0, zoneID: zone) }, sharedBy: owner)
            }
            if try await self.show(Set(visible.keys), writing: copies, in: sharedZone, to: viewer) {
                changed.append((viewer, sharedZone))
            }
            self.note(sharedZone, shownBy: viewer, !visible.isEmpty)
        }
    }

    /// Makes a viewer's copy of a zone hold exactly the records named `visible`, writing `copies` (those new or
    /// changed there): the zone appears with its first record and is deleted with its last, as CloudKit reports
    /// gaining and losing access. Returns whether anything changed.
    private func show(
        _ visible: Set<String>, writing copies: SharedRecordCopies, in sharedZone: CloudRecord.ZoneID,
        to viewer: String
    ) async throws -> Bool {
        try await engine.write(.sharedDatabase(of: viewer)) { copy in
            let shown = try copy.containsZone(sharedZone)
            if visible.isEmpty {
                return try shown && copy.deleteZone(sharedZone, reason: .deleted)
            }
            if !shown { _ = try copy.createZone(sharedZone) }
            let removed = try copy.changeTags(in: sharedZone).keys.filter { !visible.contains($0) }.sorted()
                .map { CloudRecord.ID(recordName: $0, zoneID: sharedZone) }
            guard !shown || !copies.records.isEmpty || !removed.isEmpty else { return false }
            try copy.write(
                copies.records.sorted { $0.id.recordName < $1.id.recordName }, removing: removed,
                contents: copies.contents, asCopy: true)
            return true
        }
    }

    /// Writes `copies` into a viewer's copy of a zone where their change tags differ, and removes the records named
    /// `removed`: the zone appears with its first record and is deleted with its last. Returns whether anything
    /// changed, and whether the zone is shown afterwards.
    private func update(
        writing copies: SharedRecordCopies, removing removed: Set<String>, in sharedZone: CloudRecord.ZoneID,
        for viewer: String
    ) async throws -> (changed: Bool, shown: Bool) {
        try await engine.write(.sharedDatabase(of: viewer)) { copy in
            let shown = try copy.containsZone(sharedZone)
            if !shown {
                guard !copies.records.isEmpty else { return (false, false) }
                _ = try copy.createZone(sharedZone)
            }
            let written = try copies.records.filter {
                try copy.skeleton(of: $0.id)?.systemFields?.changeTag != $0.systemFields?.changeTag
            }
            .sorted { $0.id.recordName < $1.id.recordName }
            let gone = try removed.sorted().map { CloudRecord.ID(recordName: $0, zoneID: sharedZone) }
                .filter { try copy.skeleton(of: $0) != nil }
            guard !written.isEmpty || !gone.isEmpty else { return (!shown, true) }
            try copy.write(written, removing: gone, contents: copies.contents, asCopy: true)
            // A zone left without a record is one the user no longer sees anything of.
            guard try !copy.containsRecords(in: sharedZone) else { return (true, true) }
            _ = try copy.deleteZone(sharedZone, reason: .deleted)
            return (true, false)
        }
    }

    private func note(_ sharedZone: CloudRecord.ZoneID, shownBy viewer: String, _ shown: Bool) {
        if shown {
            viewers[sharedZone, default: []].insert(viewer)
        } else {
            viewers[sharedZone]?.remove(viewer)
        }
    }

    /// Runs `body` for each viewer, in order, going on past one that fails (a copy that can't be written mustn't
    /// keep the others from losing what they no longer see); throws the first failure at the end, so that the zone
    /// is refreshed again.
    private func eachViewer<Visible: Sendable>(
        _ visible: [String: Visible], _ body: (String, Visible) async throws -> Void
    ) async throws {
        var failure: (any Error)?
        for (viewer, shown) in visible.sorted(by: { $0.key < $1.key }) {
            do {
                try await body(viewer, shown)
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
    }
}

/// A database's records as the share rules read a line of parents: skeletons, each read once.
private final class SkeletonLines: CloudRecordStore {
    private let read: (CloudRecord.ID) throws -> CloudRecord?
    private var known: [CloudRecord.ID: CloudRecord?] = [:]

    /// The lines of an owner's database, read a record at a time as the rules ask.
    init(_ source: some CloudStorageTransaction) {
        read = source.skeleton(of:)
    }

    /// The lines among a zone's skeletons, all read already.
    init(_ skeletons: [CloudRecord]) {
        let records = Dictionary(skeletons.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        read = { records[$0] }
    }

    func record(withID id: CloudRecord.ID) throws -> CloudRecord? {
        if let record = known[id] { return record }
        let record = try read(id)
        known[id] = .some(record)
        return record
    }

    func ancestor(of id: CloudRecord.ID, changeTag: String) -> CloudRecord? { nil }
    func referenceHolders(of id: CloudRecord.ID) -> [(holder: CloudRecord.ID, action: CloudReference.Action)] { [] }
    func containsZone(_ zoneID: CloudRecord.ZoneID) -> Bool { true }
}
