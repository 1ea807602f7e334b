import Foundation
import NestedCloudKitCodable

#if canImport(NestedCloudKitRules)
import NestedCloudKitRules
#endif

/// One database of a ``CloudStorageEngine`` inside one transaction: the primitives ``CloudServer`` is written over.
///
/// The reads are what the rules read (``CloudRecordStore``), what telling a write's shared-zone changes and the share
/// rules' lines of parents read (a record's skeleton, its children), the change logs' bounds and pages, and what a
/// shared database's copies read (``SharedCopies``). The writes keep the change logs themselves: a record written or removed is logged in its
/// zone, a zone created or deleted in the database's log, in the same transaction.
package protocol CloudStorageTransaction: CloudRecordStore {
    /// The time of a write transaction, for the system fields it writes (a read's means nothing).
    var now: Date { get }

    /// The change tags the transaction gives, none of which a record of the database had: a reference, so that the
    /// rules take tags from a transaction they only read, and nothing copies the transaction to reach them.
    var changeTags: ChangeTagSequence { get }

    /// The record as a fetch returns it: with a local file for each asset that has contents.
    func withAssetFiles(_ record: CloudRecord) throws -> CloudRecord

    /// Every record of a zone of this type that matches the query's predicate, in any order.
    func records(matching query: CloudQuery, in zone: CloudRecord.ZoneID) throws -> [CloudRecord]

    /// Every zone, sorted by name and owner.
    func zones() throws -> [CloudRecord.ZoneID]

    /// Whether any record is in the zone.
    func containsRecords(in zone: CloudRecord.ZoneID) throws -> Bool

    /// The share records of a zone.
    func shares(in zone: CloudRecord.ZoneID) throws -> [CloudRecord]

    /// Every record of a zone as the share rules read it: its ID, type, parent, share and change tag (its fields
    /// may be left out).
    func skeletons(in zone: CloudRecord.ZoneID) throws -> [CloudRecord]

    /// What a viewer's copy writes of these records (those that exist), named as the viewer's shared database
    /// names them (``CloudRecord/ZoneID/sharedName(ownedBy:)``), with their assets' contents where the storage
    /// keeps them beside the records.
    func copies(of ids: [CloudRecord.ID], sharedBy owner: String) throws -> SharedRecordCopies

    /// Every share record of the database.
    func allShares() throws -> [CloudRecord]

    /// The share whose URL ends in this short GUID, if the database has it.
    func share(withShortGUID shortGUID: String) throws -> CloudRecord?

    /// The change tag of each record of a zone, by record name.
    func changeTags(in zone: CloudRecord.ZoneID) throws -> [String: String]

    /// Every subscription, by ID.
    func subscriptions() throws -> [CloudSubscription]

    // MARK: Shared zones

    /// The record as the share rules read it (its type, parent and share), or `nil`.
    func skeleton(of id: CloudRecord.ID) throws -> CloudRecord?

    /// Whether a record of the store names this one as its parent.
    func hasChildren(_ id: CloudRecord.ID) throws -> Bool

    // MARK: Change logs

    /// A custom zone's log, or `nil` when the zone doesn't exist.
    func zoneLogBounds(_ zoneID: CloudRecord.ZoneID) throws -> ChangeLogBounds?

    /// The latest change of each record of a zone after `sequence`, in order, at most `limit`: the records saved
    /// (only `desiredKeys`' fields when given) and the records deleted, the position a page ending there covers, and
    /// whether more follow.
    func recordChanges(
        in zoneID: CloudRecord.ZoneID, after sequence: Int, limit: Int, desiredKeys: [String]?
    ) throws -> (modifications: [CloudRecord], deletions: [CloudRecordDeletion], through: Int, more: Bool)

    /// The database's log of zones.
    func databaseLogBounds() throws -> ChangeLogBounds

    /// The zones created, changed or deleted after `sequence`, in order, at most `limit`: each with its deletion's
    /// reason, or `nil` for a zone created or changed.
    func zoneChanges(after sequence: Int, limit: Int) throws
        -> (changes: [(zoneID: CloudRecord.ZoneID, deletion: CloudZoneDeletion.Reason?)], through: Int, more: Bool)

    /// Why a zone can't be used, or `nil` when it exists.
    func missingZoneError(_ zoneID: CloudRecord.ZoneID) throws -> CloudDatabaseError?

    /// Writes these records as they are, system fields included, and removes the records with these IDs (those
    /// that exist), logging each change in its zone.
    ///
    /// - Parameters:
    ///   - contents: The contents of assets that came as files (read before the transaction), by where they are.
    ///   - asCopy: Whether the records are a copy of another database's (a shared database), which keeps no
    ///     earlier versions for conflict ancestors.
    mutating func write(
        _ records: [CloudRecord], removing removed: [CloudRecord.ID], contents: [AssetKey: Data], asCopy: Bool)
        throws

    /// Creates a zone with a new log, logged as created, unless it exists; returns whether it was created. A zone
    /// the user deleted from Settings can be used again.
    mutating func createZone(_ zone: CloudRecord.ZoneID) throws -> Bool

    /// Deletes a zone, its records and their log, logged as deleted with the reason; returns whether it existed.
    mutating func deleteZone(_ zone: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason) throws -> Bool

    /// Saves a subscription, replacing one with its ID.
    mutating func save(_ subscription: CloudSubscription) throws

    /// Deletes a subscription; returns whether it existed.
    mutating func deleteSubscription(_ id: CloudSubscription.ID) throws -> Bool
}

extension CloudStorageTransaction {
    /// The share with this short GUID, found among every share of the database.
    package func share(withShortGUID shortGUID: String) throws -> CloudRecord? {
        try allShares().first { $0.shareContents?.shortGUID == shortGUID }
    }
}
