import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

/// The state of an ``InMemoryCloudDatabase``: records, an index of who references whom, the zones, and a few
/// earlier versions of each record for conflict ancestors.
struct InMemoryRecordStore: CloudRecordStore, Sendable {
    private(set) var records: [CloudRecord.ID: CloudRecord] = [:]
    var zones: Set<CloudRecord.ZoneID> = [.default]
    /// The zones the user deleted from Settings: refused as `userDeletedZone` until the app creates them again.
    var purgedZones: Set<CloudRecord.ZoneID> = []
    /// For each target, the records that reference it and with which actions.
    private var holders: [CloudRecord.ID: [CloudRecord.ID: Set<CloudReference.Action>]] = [:]
    /// For each record, the records that name it as their parent: what tells whether a write changes who sees
    /// records it doesn't write (`SharedZoneChange`).
    private var children: [CloudRecord.ID: Set<CloudRecord.ID>] = [:]
    /// The shares of each zone, so that a change in a zone nobody shares costs nothing more.
    private var shareIDs: [CloudRecord.ZoneID: Set<CloudRecord.ID>] = [:]
    /// The shares by the short GUID of their URL: a URL is looked up without reading every record.
    private var sharesByShortGUID: [String: CloudRecord.ID] = [:]
    /// Earlier versions of each record, newest last.
    private var history: [CloudRecord.ID: [CloudRecord]] = [:]
    private static let versionsKept = 8

    func record(withID id: CloudRecord.ID) -> CloudRecord? { records[id] }

    /// The share records of a zone, by record name.
    func shares(in zone: CloudRecord.ZoneID) -> [CloudRecord] {
        (shareIDs[zone] ?? []).compactMap { records[$0] }.sorted { $0.id.recordName < $1.id.recordName }
    }

    /// The share with this short GUID, if the store has it.
    func share(withShortGUID shortGUID: String) -> CloudRecord? {
        sharesByShortGUID[shortGUID].flatMap { records[$0] }
    }

    /// Every record of a zone. It reads the whole store: only zones with shares ask.
    func records(in zone: CloudRecord.ZoneID) -> [CloudRecord] {
        records.values.filter { $0.id.zoneID == zone }
    }

    func ancestor(of id: CloudRecord.ID, changeTag: String) -> CloudRecord? {
        if let current = records[id], current.systemFields?.changeTag == changeTag { return current }
        return history[id]?.last { $0.systemFields?.changeTag == changeTag }
    }

    func referenceHolders(of id: CloudRecord.ID) -> [(holder: CloudRecord.ID, action: CloudReference.Action)] {
        (holders[id] ?? [:]).flatMap { holder, actions in actions.map { (holder, $0) } }
    }

    func containsZone(_ zoneID: CloudRecord.ZoneID) -> Bool { zones.contains(zoneID) }

    func missingZoneError(_ zoneID: CloudRecord.ZoneID) -> CloudDatabaseError? {
        if zones.contains(zoneID) { return nil }
        return purgedZones.contains(zoneID) ? .userDeletedZone(zoneID) : .zoneNotFound(zoneID)
    }

    mutating func apply(writing recordsToWrite: [CloudRecord], removing recordIDsToRemove: [CloudRecord.ID]) {
        for record in recordsToWrite {
            if let previous = records[record.id] {
                unindex(previous)
                if let shortGUID = previous.shareContents?.shortGUID { sharesByShortGUID[shortGUID] = nil }
                history[record.id, default: []].append(previous)
                if let count = history[record.id]?.count, count > Self.versionsKept {
                    history[record.id]?.removeFirst(count - Self.versionsKept)
                }
            }
            records[record.id] = record
            index(record)
            if record.recordType == CloudShare.recordType { shareIDs[record.id.zoneID, default: []].insert(record.id) }
            if let shortGUID = record.shareContents?.shortGUID { sharesByShortGUID[shortGUID] = record.id }
        }
        for id in recordIDsToRemove {
            guard let removed = records.removeValue(forKey: id) else { continue }
            unindex(removed)
            shareIDs[id.zoneID]?.remove(id)
            if let shortGUID = removed.shareContents?.shortGUID { sharesByShortGUID[shortGUID] = nil }
            history[id] = nil
        }
    }

    mutating func removeZone(_ zone: CloudRecord.ZoneID) {
        zones.remove(zone)
        apply(writing: [], removing: records.keys.filter { $0.zoneID == zone })
    }

    private mutating func index(_ record: CloudRecord) {
        for (target, action) in record.references {
            holders[target, default: [:]][record.id, default: []].insert(action)
        }
        if let parent = record.parentID { children[parent, default: []].insert(record.id) }
    }

    private mutating func unindex(_ record: CloudRecord) {
        for (target, _) in record.references {
            holders[target]?[record.id] = nil
            if holders[target]?.isEmpty == true { holders[target] = nil }
        }
        if let parent = record.parentID {
            children[parent]?.remove(record.id)
            if children[parent]?.isEmpty == true { children[parent] = nil }
        }
    }
}

extension InMemoryRecordStore {
    /// Whether a record names this one as its parent.
    func hasChildren(_ id: CloudRecord.ID) -> Bool { children[id]?.isEmpty == false }
}

extension CloudRecord {
    /// Each reference of this record: its target and action.
    var references: [(target: CloudRecord.ID, action: CloudReference.Action)] {
        fields.flatMap { $0.value.references.map { ($0.recordID, $0.action) } }
    }
}
