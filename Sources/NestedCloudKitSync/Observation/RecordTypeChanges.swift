import Foundation
import GRDB
import NestedCloudKitCodable

/// Tells the store's observations which record types each committed transaction changed, on the writer, by one read
/// of a table of a row per type: an observation of notes is woken by a save of a note, never by a save of a chore,
/// and reads again in its own task, after the commit, off the writer.
///
/// The records of every type share `ncs_record`, so a table-level observation (GRDB's `ValueObservation`) wakes
/// every observer on every write, and a pool's writer waits for each of them to start its read. Instead the store's
/// triggers (``StoreSchema``) count each type's changes in its row of `ncs_record_type_change`, and after each
/// commit this observer compares the counts with those it saw last. It asks SQLite for no event of a row: an
/// update hook called for every row a sync writes cost a fifth of `sync.initial`. With no observation, it reads
/// nothing; the counts it kept may then be old, which can wake an observation once for nothing, never miss a change.
final class RecordTypeChanges: TransactionObserver, Sendable {
    static let table = "ncs_record_type_change"

    /// One observation's interest: the record types it read, or `nil` for every type (a graph, whose references may
    /// come to name records of any type, or a read in progress).
    final class Subscription: Sendable {
        let id: Int
        let signals: AsyncStream<Void>
        private let hub: RecordTypeChanges

        fileprivate init(id: Int, signals: AsyncStream<Void>, hub: RecordTypeChanges) {
            self.id = id
            self.signals = signals
            self.hub = hub
        }

        /// Wakes the observation on changes to these types from now on; `nil`: to any.
        func watch(_ types: Set<String>?) {
            hub.state.withLock { $0.subscribers[id]?.types = types }
        }

        deinit {
            hub.state.withLock { state in
                state.subscribers[id]?.continuation.finish()
                state.subscribers[id] = nil
            }
        }
    }

    private struct Subscriber {
        var types: Set<String>?
        var continuation: AsyncStream<Void>.Continuation
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        /// Each type's count of changes at the last commit read.
        var counts: [String: Int64] = [:]
        var wakeUps = 0
    }

    private let state = Locked(State())

    /// How many times an observation was woken, for the tests.
    var wakeUps: Int { state.withLock { $0.wakeUps } }

    /// A new observation's subscription, woken by any change until it says what it read.
    func subscribe() -> Subscription {
        let (signals, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            state.nextID += 1
            state.subscribers[state.nextID] = Subscriber(types: nil, continuation: continuation)
            return state.nextID
        }
        return Subscription(id: id, signals: signals, hub: self)
    }

    /// Takes the counts as they are, before any observation subscribes.
    func prime(_ db: Database) throws {
        let counts = try Self.counts(in: db)
        state.withLock { $0.counts = counts }
    }

    // MARK: TransactionObserver

    /// No events: the counts are read once a transaction commits.
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }

    func databaseDidChange(with event: DatabaseEvent) {}

    func databaseDidCommit(_ db: Database) {
        guard state.withLock({ !$0.subscribers.isEmpty }) else { return }
        // If the counts can't be read, every observation is woken, which is never wrong.
        let counts = try? Self.counts(in: db)
        state.withLock { state in
            var changed: Set<String>? = nil
            if let counts {
                changed = Set(counts.compactMap { type, count in state.counts[type] == count ? nil : type })
                state.counts = counts
            }
            if changed?.isEmpty == true { return }
            for subscriber in state.subscribers.values
            where changed == nil || subscriber.types == nil
                || !(subscriber.types ?? []).isDisjoint(with: changed ?? [])
            {
                subscriber.continuation.yield(())
                state.wakeUps += 1
            }
        }
    }

    func databaseDidRollback(_ db: Database) {}

    private static func counts(in db: Database) throws -> [String: Int64] {
        var counts: [String: Int64] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT record_type, changes FROM \(table)")) {
            counts[row[0]] = row[1]
        }
        return counts
    }
}
