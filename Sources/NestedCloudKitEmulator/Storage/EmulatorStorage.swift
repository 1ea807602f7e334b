import Foundation

/// Where the emulator keeps its data.
public enum EmulatorStorage: Sendable, Hashable {
    /// Nothing outlives the process.
    case inMemory
    /// A SQLite file per database under this directory; everything acknowledged survives a crash.
    case directory(String)
}
