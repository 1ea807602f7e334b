/// CloudKit's rule for atomic requests, written once for every backend: once an item of a custom zone fails, the
/// request applies nothing in that zone, and each of the zone's other items fails with
/// ``CloudDatabaseError/batchRequestFailed(_:)``. The default zone has no atomic changes: its items stand alone.
package struct AtomicZoneFailures: Sendable {
    /// The custom zones with a failed item.
    package let zones: Set<CloudRecord.ZoneID>

    /// The zones of the items that failed, the default zone left out.
    package init(failed: some Sequence<CloudRecord.ID>) {
        zones = Set(failed.lazy.map(\.zoneID)).subtracting([CloudRecord.ZoneID.default])
    }

    /// Whether no custom zone has a failed item.
    package var isEmpty: Bool { zones.isEmpty }

    /// Whether the item is in a zone with a failed item.
    package func contains(_ id: CloudRecord.ID) -> Bool { zones.contains(id.zoneID) }

    /// Takes the items of the failed zones out of those still to apply, failing each in `results` with
    /// ``CloudDatabaseError/batchRequestFailed(_:)``.
    package func fail<Item, Success>(
        _ items: inout [Item], id: (Item) -> CloudRecord.ID,
        results: inout [CloudRecord.ID: Result<Success, CloudDatabaseError>]
    ) {
        guard !isEmpty else { return }
        items.removeAll { item in
            let itemID = id(item)
            guard contains(itemID) else { return false }
            results[itemID] = .failure(.batchRequestFailed(itemID))
            return true
        }
    }

    /// Takes the items of the failed zones out of those still to apply, keyed by ID, failing each in `results`
    /// with ``CloudDatabaseError/batchRequestFailed(_:)``.
    package func fail<Value, Success>(
        _ items: inout [CloudRecord.ID: Value], results: inout [CloudRecord.ID: Result<Success, CloudDatabaseError>]
    ) {
        guard !isEmpty else { return }
        for itemID in items.keys where contains(itemID) {
            items[itemID] = nil
            results[itemID] = .failure(.batchRequestFailed(itemID))
        }
    }
}
