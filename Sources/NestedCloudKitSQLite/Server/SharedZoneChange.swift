import Foundation

/// How a write changed one zone of an owner's file, so that a server of several users brings its viewers' copies up
/// to date by what changed rather than by the whole zone.
struct SharedZoneChange: Sendable, Hashable {
    /// The names of the records written.
    var written: Set<String> = []
    /// The names of the records removed.
    var removed: Set<String> = []
    /// Whether the write may change who sees records it didn't write: a share saved or deleted, a record's share
    /// changed, a record with children moved, made or deleted. Such a write refreshes the whole zone.
    var reshaped = false

    /// A change that refreshes the whole zone: zones made or deleted, shares accepted or left.
    static let everything = SharedZoneChange(reshaped: true)
}
