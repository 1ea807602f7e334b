import Foundation

/// A page of the changes to one zone's records since a change token: the portable form of what `CKDatabase`'s
/// `recordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:)` returns.
///
/// Each record changed since the token appears once, in the order of its latest change, with its current fields;
/// each record deleted since the token appears once among ``deletions`` (a record deleted and saved again appears
/// only as saved). Store ``changeToken`` with what you kept of the page, and ask again from it while
/// ``moreComing`` is `true`.
public struct CloudRecordZoneChanges: Sendable, Hashable {
    /// The records created or changed, in the order of their latest change, with their current fields (only system
    /// fields when the request's `desiredKeys` was empty).
    public var modifications: [CloudRecord]
    /// Changed records the database couldn't return (CloudKit: a record whose asset failed to download, say),
    /// keyed by ID; fetch them again by ID.
    public var modificationFailures: [CloudRecord.ID: CloudDatabaseError]
    /// The records deleted, in the order they were deleted.
    public var deletions: [CloudRecordDeletion]
    /// The token to ask from next time: it covers this page.
    public var changeToken: CloudChangeToken
    /// Whether more changes wait after this page: ask again at once with ``changeToken``.
    public var moreComing: Bool

    /// Creates a page of zone changes.
    public init(
        modifications: [CloudRecord] = [],
        modificationFailures: [CloudRecord.ID: CloudDatabaseError] = [:],
        deletions: [CloudRecordDeletion] = [],
        changeToken: CloudChangeToken,
        moreComing: Bool
    ) {
        self.modifications = modifications
        self.modificationFailures = modificationFailures
        self.deletions = deletions
        self.changeToken = changeToken
        self.moreComing = moreComing
    }
}

/// A record deleted since a change token: its ID and the type it had, so a client can delete its local copy
/// without knowing it (`CKDatabase.RecordZoneChange.Deletion`).
public struct CloudRecordDeletion: Sendable, Hashable, Codable {
    /// The deleted record's ID.
    public var id: CloudRecord.ID
    /// The type the record had; empty when the backend doesn't report it (CloudKit Web Services doesn't).
    public var recordType: String

    /// Creates a deletion.
    public init(id: CloudRecord.ID, recordType: String) {
        self.id = id
        self.recordType = recordType
    }
}
