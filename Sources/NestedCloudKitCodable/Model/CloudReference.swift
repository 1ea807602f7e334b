import Foundation

/// A link from a record's field to another record, with what happens to the holder when the target goes.
///
/// The portable counterpart of `CKRecord.Reference`. References only link records in the same zone.
public struct CloudReference: Sendable, Hashable, Codable {
    /// What deleting the target record does to the record holding the reference.
    public enum Action: String, Sendable, Hashable, Codable, CaseIterable {
        /// Nothing: the reference is a plain link and may dangle once the target is gone.
        case none = "NONE"
        /// Deleting the target deletes the holder too (and, in turn, whatever points at the holder this way).
        ///
        /// A target can have at most 750 records pointing at it with this action.
        case deleteSelf = "DELETE_SELF"
        /// The target must exist: saving a reference to a missing record fails, and so does deleting a record
        /// that is still referenced. CloudKit Web Services knows this action; the Apple framework does not.
        case validate = "VALIDATE"
    }

    /// The ID of the record the reference points to.
    public var recordID: CloudRecord.ID

    /// What deleting the target does to the holder.
    public var action: Action

    /// Creates a reference to the record with the given ID.
    public init(recordID: CloudRecord.ID, action: Action = .none) {
        self.recordID = recordID
        self.action = action
    }

    /// Creates a reference to the given record.
    public init(_ record: CloudRecord, action: Action = .none) {
        self.init(recordID: record.id, action: action)
    }
}
