import Foundation
import NestedCloudKitCodable

/// The in-memory server's databases as the refresh of shared copies reads and writes them: the owners' private
/// databases, read, and the viewers' shared databases, taken out of the server while they change.
struct InMemoryCopyStorage: SharedCopyStorage {
    let owners: [String: InMemoryUserDatabase]
    var viewers: [String: InMemoryUserDatabase]
    /// The server's counter of log generations, handed back when the refresh ends.
    var nextGeneration: Int

    func readOwner<T>(_ owner: String, _ body: (InMemoryCopySource) throws -> T) throws -> T {
        try body(InMemoryCopySource(store: owners[owner]?.storage ?? InMemoryRecordStore()))
    }

    func changeTags(of viewer: String, in sharedZone: CloudRecord.ZoneID) -> [String: String] {
        let records = viewers[viewer]?.storage.records(in: sharedZone) ?? []
        return Dictionary(
            records.map { ($0.id.recordName, $0.systemFields?.changeTag ?? "") },
            uniquingKeysWith: { first, _ in first })
    }

    mutating func show(
        _ visible: Set<String>, writing copies: InMemoryCopies, in sharedZone: CloudRecord.ZoneID, to viewer: String
    ) -> Bool {
        var database = viewers.removeValue(forKey: viewer) ?? .shared(generation: takeGeneration())
        defer { viewers[viewer] = database }
        let shown = database.storage.zones.contains(sharedZone)
        if visible.isEmpty {
            guard shown else { return false }
            database.deleteZone(sharedZone, reason: .deleted)
            return true
        }
        if !shown { database.createZone(sharedZone, generation: takeGeneration()) }
        let removed = database.storage.records(in: sharedZone).filter { !visible.contains($0.id.recordName) }
            .map { (id: $0.id, recordType: $0.recordType) }
        guard !shown || !copies.records.isEmpty || !removed.isEmpty else { return false }
        Self.write(copies.records, removing: removed, in: &database)
        return true
    }

    mutating func update(
        writing copies: InMemoryCopies, removing removed: Set<String>, in sharedZone: CloudRecord.ZoneID,
        for viewer: String
    ) -> (changed: Bool, shown: Bool) {
        var database = viewers.removeValue(forKey: viewer) ?? .shared(generation: takeGeneration())
        defer { viewers[viewer] = database }
        let shown = database.storage.zones.contains(sharedZone)
        if !shown {
            guard !copies.records.isEmpty else { return (false, false) }
            database.createZone(sharedZone, generation: takeGeneration())
        }
        let changed = copies.records.filter {
            database.storage.records[$0.id]?.systemFields?.changeTag != $0.systemFields?.changeTag
        }
        let gone = removed.compactMap { name in
            database.storage.records[CloudRecord.ID(recordName: name, zoneID: sharedZone)]
                .map { (id: $0.id, recordType: $0.recordType) }
        }
        guard !changed.isEmpty || !gone.isEmpty else { return (!shown, true) }
        Self.write(changed, removing: gone, in: &database)
        // A zone left without a record is one the user no longer sees anything of.
        guard database.storage.records(in: sharedZone).isEmpty else { return (true, true) }
        database.deleteZone(sharedZone, reason: .deleted)
        return (true, false)
    }

    /// Writes and removes records of a copy, in name order, with their change log.
    private static func write(
        _ records: [CloudRecord], removing removed: [(id: CloudRecord.ID, recordType: String)],
        in database: inout InMemoryUserDatabase
    ) {
        let written = records.sorted { $0.id.recordName < $1.id.recordName }
        let gone = removed.sorted { $0.id.recordName < $1.id.recordName }
        database.storage.apply(writing: written, removing: gone.map(\.id))
        database.logRecordChanges(written: written, removed: gone)
    }

    private mutating func takeGeneration() -> Int {
        defer { nextGeneration += 1 }
        return nextGeneration
    }
}

/// An owner's private database, read by a refresh of shared copies.
struct InMemoryCopySource: SharedCopySource {
    let store: InMemoryRecordStore

    func record(withID id: CloudRecord.ID) -> CloudRecord? { store.record(withID: id) }
    func ancestor(of id: CloudRecord.ID, changeTag: String) -> CloudRecord? { nil }
    func referenceHolders(of id: CloudRecord.ID) -> [(holder: CloudRecord.ID, action: CloudReference.Action)] { [] }
    func containsZone(_ zoneID: CloudRecord.ZoneID) -> Bool { store.containsZone(zoneID) }

    func shares(in zone: CloudRecord.ZoneID) -> [CloudRecord] { store.shares(in: zone) }
    func skeletons(in zone: CloudRecord.ZoneID) -> [CloudRecord] { store.records(in: zone) }

    func copies(of ids: [CloudRecord.ID], sharedBy owner: String) -> InMemoryCopies {
        InMemoryCopies(
            records: ids.compactMap { store.record(withID: $0)?.movingZones { $0.sharedName(ownedBy: owner) } })
    }
}

/// Records of an owner's database, as a viewer's shared database names them.
struct InMemoryCopies: SharedRecordCopies {
    var records: [CloudRecord]

    func keeping(_ names: Set<String>) -> InMemoryCopies {
        InMemoryCopies(records: records.filter { names.contains($0.id.recordName) })
    }
}
