import Foundation
import NestedCloudKitCodable

/// Where a server of several users keeps their databases, as ``SharedCopies`` reads the owners' and writes the
/// viewers' copies: a dictionary of the in-memory server, the files of the SQLite server.
package protocol SharedCopyStorage {
    /// What a viewer's copy takes of an owner's records.
    associatedtype Copies: SharedRecordCopies
    /// One consistent read of an owner's private database.
    associatedtype Owner: SharedCopySource where Owner.Copies == Copies

    /// Runs `body` on one consistent read of `owner`'s private database.
    mutating func readOwner<T>(_ owner: String, _ body: (Owner) throws -> T) throws -> T

    /// The change tag of each record of a viewer's copy of a zone, by record name.
    mutating func changeTags(of viewer: String, in sharedZone: CloudRecord.ZoneID) throws -> [String: String]

    /// Makes a viewer's copy of a zone hold exactly the records named `visible`, writing `copies` (those new or
    /// changed there) and logging what changed: the zone appears with its first record and is deleted with its last,
    /// as CloudKit reports gaining and losing access.
    ///
    /// - Returns: Whether anything changed.
    mutating func show(
        _ visible: Set<String>, writing copies: Copies, in sharedZone: CloudRecord.ZoneID, to viewer: String
    ) throws -> Bool

    /// Writes `copies` into a viewer's copy of a zone where their change tags differ, and removes the records named
    /// `removed`, logging what changed: the zone appears with its first record and is deleted with its last.
    ///
    /// - Returns: Whether anything changed, and whether the zone is shown afterwards.
    mutating func update(
        writing copies: Copies, removing removed: Set<String>, in sharedZone: CloudRecord.ZoneID, for viewer: String
    ) throws -> (changed: Bool, shown: Bool)
}

/// An owner's database as a refresh of shared copies reads it. As a ``CloudRecordStore`` it answers the share
/// rules' reads of a record's line of parents, which need only its ID, type, parent and share.
package protocol SharedCopySource: CloudRecordStore {
    associatedtype Copies: SharedRecordCopies

    /// The share records of a zone.
    func shares(in zone: CloudRecord.ZoneID) throws -> [CloudRecord]

    /// Every record of a zone as the share rules read it: its ID, type, parent, share and change tag (its fields
    /// may be left out).
    func skeletons(in zone: CloudRecord.ZoneID) throws -> [CloudRecord]

    /// What a viewer's copy writes of these records (those that exist), named as the viewer's shared database
    /// names them (``CloudRecord/ZoneID/sharedName(ownedBy:)``).
    func copies(of ids: [CloudRecord.ID], sharedBy owner: String) throws -> Copies
}

/// Copies of an owner's records for a viewer's shared database: the records, and whatever a storage keeps beside
/// them (the SQLite server's asset contents).
package protocol SharedRecordCopies {
    /// The records, named as the viewer's shared database names them.
    var records: [CloudRecord] { get }

    /// The copies of the records with these names only.
    func keeping(_ names: Set<String>) -> Self
}
