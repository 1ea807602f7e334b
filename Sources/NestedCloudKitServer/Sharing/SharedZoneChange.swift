import Foundation
import NestedCloudKitCodable

/// How a write changed one zone of an owner's database, so that a server of several users brings its viewers'
/// copies up to date by what changed rather than by the whole zone (``SharedCopies``).
package struct SharedZoneChange: Sendable, Hashable {
    /// The names of the records written.
    package var written: Set<String> = []
    /// The names of the records removed.
    package var removed: Set<String> = []
    /// Whether the write may change who sees records it didn't write: a share saved or deleted, a record's share
    /// changed, a record with children moved, made or deleted. Such a write refreshes the whole zone.
    package var reshaped = false

    package init(written: Set<String> = [], removed: Set<String> = [], reshaped: Bool = false) {
        self.written = written
        self.removed = removed
        self.reshaped = reshaped
    }

    /// A change that refreshes the whole zone: zones made or deleted, shares accepted or left, or a server that
    /// doesn't say what a write touched.
    package static let everything = SharedZoneChange(reshaped: true)
}
