import Foundation
import NestedCloudKitCodable

/// A change the server doesn't have yet, as ``SyncStore/pendingChanges()`` lists it: what a debug screen shows
/// and a support request carries (``SyncStore/exportPendingChanges()``). It holds no field's value, but
/// ``lastError`` is the server's or the policy's words, which may quote one.
public struct PendingChange: Sendable, Hashable, Codable {
    /// What the change does to the record.
    public enum Operation: String, Sendable, Hashable, Codable {
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
    /// When the record's change was first queued, by the store's clock: later saves of the record before the server
    /// has one join the same change and keep this time. `nil` for a change queued by a version of the store before
    /// it kept the time.
    public var queuedAt: Date?
    /// How many uploads of it failed in a row.
    public var failures: Int
    /// Why the last upload failed, if it did; for a halted change, why it is halted.
    public var lastError: String?
    /// Whether the engine stopped sending it until the app fixes the record (save it again) or asks for it again
    /// (``SyncStore/retryHaltedChange(_:)``, ``SyncStore/retryHaltedChanges()``): a change the server refused for a
    /// reason retrying can't fix, or a record whose server copy a fetch couldn't apply.
    public var isHalted: Bool
    /// Whether a version of it was ever sent: the server may hold one even if no answer came back.
    public var wasSent: Bool
    /// The bytes of field data the record holds as CloudKit counts them against its 1 MB limit (each field's name
    /// and value, assets not counted); 0 for a deletion. The upload adds the engine's edit times
    /// (``SyncMetadataFields``), a few bytes a field, which this leaves out.
    public var size: Int

    /// A pending change; for tests and previews of an app's queue display.
    public init(
        recordID: CloudRecord.ID, recordType: String, operation: Operation, queuedAt: Date?, failures: Int,
        lastError: String?, isHalted: Bool, wasSent: Bool, size: Int
    ) {
        self.recordID = recordID
        self.recordType = recordType
        self.operation = operation
        self.queuedAt = queuedAt
        self.failures = failures
        self.lastError = lastError
        self.isHalted = isHalted
        self.wasSent = wasSent
        self.size = size
    }

    init(_ entry: OutboxEntry, queuedAt: Date?, record: CloudRecord?) {
        self.init(
            recordID: entry.id, recordType: entry.recordType, operation: entry.operation == .save ? .save : .delete,
            queuedAt: queuedAt, failures: entry.failures, lastError: entry.lastError, isHalted: entry.halted,
            wasSent: entry.sent,
            size: entry.operation == .save ? record.map(CloudRequestRules.fieldDataSize(of:)) ?? 0 : 0)
    }
}
