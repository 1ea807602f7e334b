/// How a save treats a record that already exists on the server; CloudKit's `RecordSavePolicy`.
public enum CloudRecordSavePolicy: Sendable, Hashable, CaseIterable {
    /// Save only if the server's record is the version the client's copy came from (same change tag); otherwise
    /// fail with ``CloudDatabaseError/serverRecordChanged(server:client:ancestor:)``. The client's fields are
    /// written over the server's, its cleared fields removed, and fields it doesn't know about kept. The default.
    case ifServerRecordUnchanged
    /// Write the client's fields over the server's whatever its version, and remove its cleared fields; fields the
    /// client doesn't know about are kept.
    case changedKeys
    /// Write every field the client holds over the server's, whatever its version, and remove its cleared fields.
    /// As CloudKit's `allKeys`, fields the client doesn't hold stay: "a server record can contain keys that aren't
    /// present locally", such as the fields a newer version of the app added. A portable record holds every field it
    /// has, so this saves what ``changedKeys`` does.
    case allKeys
}
