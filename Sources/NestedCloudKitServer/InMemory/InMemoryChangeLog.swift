import NestedCloudKitCodable

/// A log of changes in order, in which each key's latest change supersedes its earlier ones: what an
/// ``InMemoryCloudDatabase`` keeps per zone (records saved and deleted) and per database (zones changed, deleted
/// and purged, each a key of its own: see `InMemoryUserDatabase/DatabaseLogKey`).
///
/// Reading the changes since a position costs the changes since it (and the superseded entries among them, which
/// are compacted away once they are half the log), never the size of the zone.
struct InMemoryChangeLog<Key: Hashable & Sendable, Change: Sendable>: Sendable {
    /// Which life of the log this is; positions from another are expired.
    let generation: Int
    /// The sequence number the log started at: a position before it is from before the log existed.
    let startSequence: Int
    private var entries: [(sequence: Int, key: Key, change: Change)] = []
    /// Each key's latest entry.
    private var latest: [Key: Int] = [:]
    private var supersededCount = 0

    init(generation: Int, startSequence: Int) {
        self.generation = generation
        self.startSequence = startSequence
    }

    /// The sequence number of the latest change, or the start if there is none.
    var lastSequence: Int { entries.last?.sequence ?? startSequence }

    /// Appends a change, superseding the key's earlier one.
    mutating func append(_ change: Change, for key: Key, sequence: Int) {
        if latest[key] != nil { supersededCount += 1 }
        latest[key] = sequence
        entries.append((sequence, key, change))
        compactIfWorthIt()
    }

    /// Supersedes the key's latest change without a new one: a later change of another key made it history.
    mutating func remove(_ key: Key) {
        guard latest.removeValue(forKey: key) != nil else { return }
        supersededCount += 1
        compactIfWorthIt()
    }

    private mutating func compactIfWorthIt() {
        if supersededCount > 64 && supersededCount * 2 > entries.count { compact() }
    }

    /// The latest change of each key changed after `sequence`, in order, at most `limit`; and the sequence number
    /// a page ending there covers, and whether more follow.
    func changes(after sequence: Int, limit: Int) -> (changes: [(key: Key, change: Change)], through: Int, more: Bool) {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        var page: [(key: Key, change: Change)] = []
        var through = max(sequence, startSequence)
        for entry in entries[low...] where latest[entry.key] == entry.sequence {
            guard page.count < limit else { return (page, through, true) }
            page.append((entry.key, entry.change))
            through = entry.sequence
        }
        return (page, lastSequence, false)
    }

    private mutating func compact() {
        entries.removeAll { latest[$0.key] != $0.sequence }
        supersededCount = 0
    }
}
