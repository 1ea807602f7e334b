import Foundation
import NestedCloudKitCodable

/// Keeps each user's shared database a copy of what the shares they accepted cover, written once for every server
/// of several users (the in-memory and the SQLite one) over their storage (``SharedCopyStorage``).
///
/// The owners' databases are the truth; a copy is brought up to date from them after every change to a shared zone,
/// whoever makes it. A change that says which records a write touched, and can't change who sees the others
/// (``SharedZoneChange``), is applied by those records alone, so a write to a large shared zone costs what it wrote;
/// any other refreshes the zone whole, from its records' skeletons, writing only the records new or changed in each
/// copy. So a record a share stops covering (the user removed, the share deleted, the record moved out of the
/// hierarchy) is a deletion in the user's zone changes, and a zone they no longer see any record of is a deletion in
/// their database changes, as CloudKit reports losing access.
package struct SharedCopies: Sendable {
    /// A zone of an owner's, by the owner's name for it.
    package struct OwnedZone: Hashable, Sendable {
        package var owner: String
        package var zone: CloudRecord.ZoneID

        package init(owner: String, zone: CloudRecord.ZoneID) {
            self.owner = owner
            self.zone = zone
        }
    }

    /// What a refresh did: each viewer's copy that changed, by the zone as the viewer names it, and the zones whose
    /// refresh failed (a copy that can't be written just now), to refresh whole later.
    package struct Outcome {
        package var changed: [(viewer: String, sharedZone: CloudRecord.ZoneID)] = []
        package var failed: [OwnedZone] = []
    }

    /// The users whose shared database shows each zone, as they name it: those a refresh must look at even once no
    /// share lists them any more.
    private var viewers: [CloudRecord.ZoneID: Set<String>] = [:]

    package init() {}

    /// Notes that a viewer's copy shows a zone: what a server learns from the copies an earlier run left.
    package mutating func noteShown(_ sharedZone: CloudRecord.ZoneID, by viewer: String) {
        viewers[sharedZone, default: []].insert(viewer)
    }

    /// Brings up to date the copies of every user who may see one of these zones: the participants who accepted
    /// one of its shares, and the users whose copy shows it now. Zones are refreshed in order, and a viewer's copy
    /// that fails doesn't keep the others from losing what they no longer see.
    package mutating func refresh<Storage: SharedCopyStorage>(
        _ due: [OwnedZone: SharedZoneChange], in storage: inout Storage
    ) -> Outcome {
        var outcome = Outcome()
        let ordered = due.filter { $0.key.zone != .default }.sorted {
            ($0.key.owner, $0.key.zone.zoneName, $0.key.zone.ownerName)
                < ($1.key.owner, $1.key.zone.zoneName, $1.key.zone.ownerName)
        }
        for (owned, change) in ordered {
            do {
                if change.reshaped {
                    try refreshWhole(owned, in: &storage, into: &outcome)
                } else {
                    try refresh(owned, after: change, in: &storage, into: &outcome)
                }
            } catch {
                outcome.failed.append(owned)
            }
        }
        return outcome
    }

    /// What an incremental refresh writes: the names each viewer sees among the records written, and their copies.
    private struct IncrementalUpdate<Copies> {
        var visible: [String: Set<String>] = [:]
        var copies: Copies?
    }

    /// Brings one zone up to date in its viewers' copies after a write that changed who sees only the records it
    /// wrote: only those are looked at.
    private mutating func refresh<Storage: SharedCopyStorage>(
        _ owned: OwnedZone, after change: SharedZoneChange, in storage: inout Storage, into outcome: inout Outcome
    ) throws {
        let (owner, zone) = (owned.owner, owned.zone)
        let sharedZone = zone.sharedName(ownedBy: owner)
        let showing = viewers[sharedZone] ?? []
        let update = try storage.readOwner(owner) { source -> IncrementalUpdate<Storage.Copies>? in
            let shares = try source.shares(in: zone)
            // A zone nobody else sees (most of a user's zones) needs nothing more. Without shares but with copies
            // left, the whole refresh is cheap: it reads no record and empties them.
            if shares.isEmpty { return showing.subtracting([owner]).isEmpty ? IncrementalUpdate() : nil }
            var viewers = SharedDatabaseRules.participants(of: shares).union(showing)
            viewers.remove(owner)
            guard !viewers.isEmpty else { return IncrementalUpdate() }
            // A record written and then deleted by a later write is gone here: it is removed from the copies.
            let copies = try source.copies(
                of: change.written.sorted().map { CloudRecord.ID(recordName: $0, zoneID: zone) }, sharedBy: owner)
            var update = IncrementalUpdate(copies: copies)
            for viewer in viewers {
                update.visible[viewer] = Set(
                    try copies.records.map(\.id.recordName).filter { name in
                        try ShareAccess.permission(
                            of: viewer, on: CloudRecord.ID(recordName: name, zoneID: zone), in: source,
                            shares: shares) != nil
                    })
            }
            return update
        }
        // A viewer whose copy doesn't show the zone yet gets all of it, not only what this write touched.
        guard let update, update.visible.allSatisfy({ $0.value.isEmpty || showing.contains($0.key) }) else {
            return try refreshWhole(owned, in: &storage, into: &outcome)
        }
        guard let copies = update.copies else { return }
        let touched = change.written.union(change.removed)
        try Self.eachViewer(update.visible) { viewer, visible in
            let (changed, shown) = try storage.update(
                writing: copies.keeping(visible), removing: touched.subtracting(visible), in: sharedZone, for: viewer)
            if changed { outcome.changed.append((viewer, sharedZone)) }
            note(sharedZone, shownBy: viewer, shown)
        }
    }

    /// Brings one zone up to date in its viewers' copies, whole. Who sees what is worked out from the zone's
    /// skeletons, and only the records new or changed in a copy are copied: a write to a large shared zone costs a
    /// pass over it, not a copy of it.
    private mutating func refreshWhole<Storage: SharedCopyStorage>(
        _ owned: OwnedZone, in storage: inout Storage, into outcome: inout Outcome
    ) throws {
        let (owner, zone) = (owned.owner, owned.zone)
        let sharedZone = zone.sharedName(ownedBy: owner)
        let showing = viewers[sharedZone] ?? []
        let shown = try storage.readOwner(owner) { source -> [String: [String: String]] in
            let shares = try source.shares(in: zone)
            var viewers = SharedDatabaseRules.participants(of: shares).union(showing)
            viewers.remove(owner)
            guard !viewers.isEmpty else { return [:] }
            let skeletons = shares.isEmpty ? [] : try source.skeletons(in: zone)
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
        try Self.eachViewer(shown) { viewer, visible in
            // Only this refresh writes the copy, so its tags can't change before the write below.
            let tags = try storage.changeTags(of: viewer, in: sharedZone)
            let changed = visible.filter { tags[$0.key] != $0.value }.keys.sorted()
            // Read after the skeletons: a record changed since is written in its newer version, and one deleted
            // since is left to the refresh that follows its deletion.
            let copies = try storage.readOwner(owner) { source in
                try source.copies(of: changed.map { CloudRecord.ID(recordName: $0, zoneID: zone) }, sharedBy: owner)
            }
            if try storage.show(Set(visible.keys), writing: copies, in: sharedZone, to: viewer) {
                outcome.changed.append((viewer, sharedZone))
            }
            note(sharedZone, shownBy: viewer, !visible.isEmpty)
        }
    }

    private mutating func note(_ sharedZone: CloudRecord.ZoneID, shownBy viewer: String, _ shown: Bool) {
        if shown {
            viewers[sharedZone, default: []].insert(viewer)
        } else {
            viewers[sharedZone]?.remove(viewer)
        }
    }

    /// Runs `body` for each viewer, in order, going on past one that fails (a copy that can't be written mustn't
    /// keep the others from losing what they no longer see); throws the first failure at the end, so that the zone
    /// is refreshed again.
    private static func eachViewer<Visible>(
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
}

/// A zone's records as the share rules read them (``SharedCopySource/skeletons(in:)``), for the lines of parents.
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
