import NestedCloudKitCodable

/// What the engine does when the server's record changed since the local copy was fetched, and the local copy
/// changed too.
///
/// Every policy resolves onto the server's copy (its system fields), so the resolved record saves without another
/// conflict; every resolution is a ``SyncEvent/conflictResolved(_:)`` event.
public enum ConflictPolicy: Sendable {
    /// The server's record replaces the local changes (Seam3's default).
    case serverWins
    /// The local changes win: every field the local record changed (or cleared) since the server's copy it was made
    /// from takes the local value; the fields it never changed keep the server's, so a field a newer version of the
    /// app wrote, which an older version's record doesn't know, is never lost.
    case clientWins
    /// The record the user edited last wins (CKSIncrementalStore's default): the server's whole, or the local changes
    /// as under ``clientWins``. Compared on the edit time the engine stores in the record
    /// (``SyncMetadataFields/editTime``), never on the server's `modificationDate`, which is the time of the upload.
    case newestEditWins
    /// Field by field, three-way: a field changed on one side only takes that side's value; a field changed on both
    /// keeps the value edited last, by the per-field edit times stored in the record
    /// (``SyncMetadataFields/fieldEditTimes``). The default: no edit is lost unless a newer edit of the same field
    /// replaced it.
    case fieldByField
    /// The app decides, given the server's, the local and the ancestor record and the locally changed keys.
    case custom(@Sendable (SyncConflict) async throws -> SyncConflict.Resolution)
}

/// What the engine does when one side deleted a record the other side changed.
public enum DeleteConflictPolicy: String, Sendable, Hashable {
    /// The deletion stands; the edit is dropped (with an event that names the record).
    case deleteWins
    /// The edited record stays, and is saved to the server again if the server deleted it. The default: nothing
    /// the user typed is lost.
    case editWins
}

/// A conflict a ``ConflictPolicy/custom(_:)`` policy resolves.
public struct SyncConflict: Sendable, Hashable {
    /// How a custom policy resolves a conflict.
    public enum Resolution: Sendable, Hashable {
        /// Keep the server's record; drop the local changes.
        case keepServer
        /// Keep the local record; it replaces the server's.
        case keepClient
        /// Save these fields (the record's system fields are ignored: the server's are used).
        case merged(CloudRecord)
    }

    /// The record's ID.
    public var recordID: CloudRecord.ID { server.id }
    /// The server's current record.
    public var server: CloudRecord
    /// The local record, with the changes not yet on the server.
    public var client: CloudRecord
    /// The server's record as the store last fetched it, the base both sides changed; `nil` if the local record
    /// never reached the server (another device created a record with the same name).
    public var ancestor: CloudRecord?
    /// The fields the local record changed since the ancestor.
    public var locallyChangedKeys: [String]
    /// The fields the server's record changed since the ancestor.
    public var serverChangedKeys: [String]

    /// A conflict; for testing a custom policy.
    public init(
        server: CloudRecord, client: CloudRecord, ancestor: CloudRecord?, locallyChangedKeys: [String],
        serverChangedKeys: [String]
    ) {
        self.server = server
        self.client = client
        self.ancestor = ancestor
        self.locallyChangedKeys = locallyChangedKeys
        self.serverChangedKeys = serverChangedKeys
    }
}

/// How a conflict was resolved, as ``SyncEvent/conflictResolved(_:)`` reports it.
public struct ConflictResolution: Sendable, Hashable {
    /// What won.
    public enum Decision: Sendable, Hashable {
        /// The server's record was kept; the local changes were dropped.
        case keptServer
        /// The local record was kept and will be uploaded.
        case keptClient
        /// Fields were taken from both sides.
        case merged(fromServer: [String], fromClient: [String])
        /// The server deleted the record; the local edit was dropped with it.
        case deletedWithServer
        /// The server deleted the record; the local record will be saved to the server again.
        case recreatedFromClient
        /// The local deletion stands against the server's edit.
        case keptLocalDeletion
        /// The server's edit restored a record deleted locally.
        case restoredFromServer
        /// A deleted record was kept, because a record that holds a `.deleteSelf` reference to it was edited or
        /// created (``DeleteConflictPolicy/editWins``): the record named here, which would otherwise have been
        /// deleted with it. A deletion this device hadn't sent is cancelled; a record the server deleted is saved
        /// to it again.
        case restoredForReference(from: CloudRecord.ID)
        /// The record was deleted, its changes dropped, because the record named here, to which it holds a
        /// `.deleteSelf` reference, was deleted (``DeleteConflictPolicy/deleteWins``, or no other choice: a holder
        /// can't outlive its target).
        case deletedWithTarget(CloudRecord.ID)
    }

    /// The record.
    public var recordID: CloudRecord.ID
    /// What won.
    public var decision: Decision

    /// A resolution; for tests and previews of an app's event handling.
    public init(recordID: CloudRecord.ID, decision: Decision) {
        self.recordID = recordID
        self.decision = decision
    }
}
