import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitRules

/// The sync store, inside a write transaction, as the rules engine reads a backend (`CloudRecordStore`): so that
/// ``LocalCloudDatabase`` keeps CloudKit's rules (save policies, references, atomic zones) with the store's record
/// standing for the server's.
struct LocalRecordStore: CloudRecordStore {
    let db: Database

    /// The store's record (the app's current fields, the system fields of the last server copy), without the
    /// engine's own fields.
    func record(withID id: CloudRecord.ID) throws -> CloudRecord? {
        try StoreTables.record(id, in: db).map { SyncStore.serverCopy($0.record) }
    }

    /// The server copy of that change tag, among those the store keeps.
    func ancestor(of id: CloudRecord.ID, changeTag: String) throws -> CloudRecord? {
        try SyncStore.readVersion(of: id, changeTag: changeTag, in: db).map { SyncStore.serverCopy($0.server) }
    }

    func referenceHolders(of id: CloudRecord.ID) throws -> [(holder: CloudRecord.ID, action: CloudReference.Action)] {
        try StoreTables.holders(of: id, in: db).map { ($0.holder, $0.action ?? .none) }
    }

    /// Every zone: the store holds records of any zone, and the engine creates the zones it syncs.
    func containsZone(_ zoneID: CloudRecord.ZoneID) throws -> Bool { true }
}
