import Foundation
import NestedCloudKitCodable

/// What one read of an observation depended on, told by the code that reads as it reads: the record types whose
/// changes can change its result. Bound for the read's duration (``current``), so the store's read functions say
/// what they read without every caller passing it down.
final class ReadRecorder: Sendable {
    private let state = Locked<Set<String>?>([])

    /// The recorder of the read under way on this thread, if an observation is reading.
    @TaskLocal static var current: ReadRecorder?

    /// The record types read; `nil`: any type's change may change the result.
    var recordTypes: Set<String>? { state.withLock { $0 } }

    /// The read depends on the records of a type.
    func read(_ recordType: String) {
        state.withLock { _ = $0?.insert(recordType) }
    }

    /// The read depends on records of any type: it followed references, which may name a record of any type,
    /// or looked for one that isn't there, which may come as any type.
    func readEveryType() {
        state.withLock { $0 = nil }
    }
}
