import Foundation

/// A page of the changes to a database's zones since a change token: the portable form of what `CKDatabase`'s
/// `databaseChanges(since:resultsLimit:)` returns.
///
/// A zone appears in ``modifiedZoneIDs`` when it was created or any of its records changed since the token; fetch
/// its record changes with ``CloudDatabase/recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)``. A zone
/// deleted since the token appears in ``deletions`` with the reason, which decides what a client does with its
/// local copy. Only custom zones are tracked: the default zone never appears.
///
/// A zone deleted and then created again since the token appears in both: apply the deletions first, then fetch
/// the zones changed. A deletion stays listed after the zone is created again, so a client that missed it (a
/// purge above all, after which it must not upload its copy again) still learns of it; a purge stays listed even
/// after a later deletion, which then appears too, after it.
public struct CloudDatabaseChanges: Sendable, Hashable {
    /// The zones created or changed, in the order of their latest change.
    public var modifiedZoneIDs: [CloudRecord.ZoneID]
    /// The zones deleted, with why, in the order they were deleted; a zone deleted again after a purge appears
    /// twice, the purge first.
    public var deletions: [CloudZoneDeletion]
    /// The token to ask from next time: it covers this page.
    public var changeToken: CloudChangeToken
    /// Whether more changes wait after this page: ask again at once with ``changeToken``.
    public var moreComing: Bool

    /// Creates a page of database changes.
    public init(
        modifiedZoneIDs: [CloudRecord.ZoneID] = [],
        deletions: [CloudZoneDeletion] = [],
        changeToken: CloudChangeToken,
        moreComing: Bool
    ) {
        self.modifiedZoneIDs = modifiedZoneIDs
        self.deletions = deletions
        self.changeToken = changeToken
        self.moreComing = moreComing
    }
}

/// A zone deleted since a change token, and why (`CKDatabase.DatabaseChange.Deletion`).
public struct CloudZoneDeletion: Sendable, Hashable, Codable {
    /// The deleted zone.
    public var zoneID: CloudRecord.ZoneID
    /// Why it was deleted.
    public var reason: Reason

    /// Creates a zone deletion.
    public init(zoneID: CloudRecord.ZoneID, reason: Reason) {
        self.zoneID = zoneID
        self.reason = reason
    }

    /// Why a zone was deleted; each asks a client for something different.
    public enum Reason: String, Sendable, Hashable, Codable {
        /// An app deleted it: delete the local copy of its records.
        case deleted
        /// The user deleted the app's data in Settings: delete the local copy and don't upload it again unless
        /// the user asks.
        case purged
        /// The user reset their encrypted data (lost their keys): the zone's encrypted data is gone; keep the local
        /// copy and upload it again into a new zone.
        case encryptedDataReset
    }
}
