import NestedCloudKitCodable

/// What a backend that keeps records itself tells `CloudModificationPlan` about its current state.
///
/// Backends that store records (in memory, SQLite) read through this protocol, and the plan decides what CloudKit
/// would do; so every such backend keeps the same rules, from one tested implementation.
package protocol CloudRecordStore {
    /// The stored record with this ID, or `nil`.
    func record(withID id: CloudRecord.ID) throws -> CloudRecord?

    /// An earlier version of a record, by its change tag, if the store still has it; `nil` otherwise.
    func ancestor(of id: CloudRecord.ID, changeTag: String) throws -> CloudRecord?

    /// Every stored record holding a reference to the record with this ID, with the reference's action.
    func referenceHolders(of id: CloudRecord.ID) throws -> [(holder: CloudRecord.ID, action: CloudReference.Action)]

    /// Whether the zone exists; the default zone always does.
    func containsZone(_ zoneID: CloudRecord.ZoneID) throws -> Bool

    /// Why a zone can't be used, or `nil` when it exists: `zoneNotFound`, or `userDeletedZone` for a zone the user
    /// deleted from Settings, until the app creates it again.
    func missingZoneError(_ zoneID: CloudRecord.ZoneID) throws -> CloudDatabaseError?
}

extension CloudRecordStore {
    /// A store that doesn't know of purges: `zoneNotFound` for a zone it doesn't have.
    package func missingZoneError(_ zoneID: CloudRecord.ZoneID) throws -> CloudDatabaseError? {
        try containsZone(zoneID) ? nil : .zoneNotFound(zoneID)
    }
}
