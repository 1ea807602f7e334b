import Foundation
import NestedCloudKitCodable

/// A page of a zone's changes since a sync token, from ``CloudKitWebServicesDatabase/recordZoneChanges(in:since:desiredKeys:resultsLimit:)``.
public struct CloudKitZoneChanges: Sendable, Hashable {
    /// The records created or changed, with their current fields.
    public var changedRecords: [CloudRecord] = []
    /// The records deleted.
    public var deletedRecordIDs: [CloudRecord.ID] = []
    /// The token to ask from next time; these changes are the last it includes.
    public var syncToken: String
    /// Whether more changes wait: ask again with ``syncToken`` at once.
    public var moreComing: Bool

    /// Creates a page of changes.
    public init(
        changedRecords: [CloudRecord] = [], deletedRecordIDs: [CloudRecord.ID] = [], syncToken: String, moreComing: Bool
    ) {
        self.changedRecords = changedRecords
        self.deletedRecordIDs = deletedRecordIDs
        self.syncToken = syncToken
        self.moreComing = moreComing
    }
}
