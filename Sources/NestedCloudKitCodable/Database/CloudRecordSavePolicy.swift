/// How a save treats a record that already exists on the server; CloudKit's `RecordSavePolicy`.
public enum CloudRecordSavePolicy: Sendable, Hashable, CaseIterable {
    /// Save only if the server's record is the version the client's copy came from (same change tag); otherwise
    /// fail with ``CloudDatabaseError/serverRecordChanged(server:client:ancestor:)``. The client's fields are
    /// written over the server's, its cleared fields removed, and fields it doesn't know about kept. The default.
    case ifServerRecordUnchanged
    /// Write the client's fields over the server's whatever its version, and remove its cleared fields; fields the
    /// client doesn't know about are kept.
    case changedKeys
    /// Replace the server's record with the client's: fields the client doesn't hold are removed.
    case allKeys
}
