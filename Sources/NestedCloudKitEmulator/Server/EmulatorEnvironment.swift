/// The CloudKit environment the emulator serves.
public enum EmulatorEnvironment: String, Sendable, Hashable, Codable, CaseIterable {
    /// Record types and fields are created by the first save that uses them.
    case development
    /// Record types and fields must exist in an imported schema; queries need their fields marked queryable or
    /// sortable.
    case production
}
