import NestedCloudKitCodable

/// A record the server changed that a fetch couldn't apply, as ``SyncStore/skippedRecords()`` lists it.
///
/// The server couldn't give it (a record the client can't read), or the conflict policy failed on it. The sync went
/// on without it: the local copy stays as it was, and a pending change of it is halted. The engine fetches it again
/// once the app fixed the cause and called ``SyncStore/retryHaltedChanges()``.
public struct SkippedRecord: Sendable, Hashable {
    /// The record.
    public var recordID: CloudRecord.ID
    /// Why it couldn't be applied.
    public var reason: String
}
