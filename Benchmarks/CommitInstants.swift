import Foundation
import GRDB

/// The instant of a database's last commit, as its transaction observers learn of it: where an observation's
/// latency starts.
final class CommitInstants: TransactionObserver, @unchecked Sendable {
    /// Guards `last`: the writer's queue sets it, the benchmark's task reads it.
    private let lock = NSLock()
    private var last: ContinuousClock.Instant?

    /// The last commit's instant, taken once: a second read without a commit between is a workload's mistake.
    func latest() throws -> ContinuousClock.Instant {
        lock.lock()
        defer { lock.unlock() }
        guard let instant = last else { throw BenchmarkFailure("store.observe: no commit since the last one read") }
        last = nil
        return instant
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidCommit(_ db: Database) {
        let now = ContinuousClock.now
        lock.lock()
        last = now
        lock.unlock()
    }
    func databaseDidRollback(_ db: Database) {}
}
