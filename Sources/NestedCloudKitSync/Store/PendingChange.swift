import NestedCloudKitCodable

/// A change the server doesn't have yet, as ``SyncStore/pendingChanges()`` lists it.
public struct PendingChange: Sendable, Hashable {
    /// What the change does to the record.
    public enum Operation: String, Sendable, Hashable {
        /// Save the record's current fields.
        case save
        /// Delete the record.
        case delete
    }

    /// The record.
    public var recordID: CloudRecord.ID
    /// Its type.
    public var recordType: String
    /// Save or delete.
    public var operation: Operation
    /// How many uploads of it failed in a row.
    public var failures: Int
    /// Why the last upload failed, if it did.
    public var lastError: String?
    /// Whether the engine stopped sending it until the app fixes the record (save it again) or calls
    /// ``SyncStore/retryHaltedChanges()``: a change the server refuses for a reason retrying can't fix.
    public var isHalted: Bool

    init(_ entry: OutboxEntry) {
        recordID = entry.id
        recordType = entry.recordType
        operation = entry.operation == .save ? .save : .delete
        failures = entry.failures
        lastError = entry.lastError
        isHalted = entry.halted
    }
}
