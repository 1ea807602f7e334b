import NIOConcurrencyHelpers

/// The revisions of the emulator's databases: one sequence for all of them, so that a revision is never given
/// twice, whatever was reset or reopened in between.
final class RevisionCounter: Sendable {
    private let last = NIOLockedValueBox(0)

    func next() -> Int {
        last.withLockedValue { last in
            last += 1
            return last
        }
    }
}
