import NestedCloudKitCodable

// The shared database: the zones others share with the user come and go with their shares. The engine learns of
// them from the shared database's changes, fetches each into the store under its owner's name, sends the user's
// changes to them back through the shared database, and deletes a zone's local copy when the user loses access
// to it (removed from the share, the share deleted, or left): the data was never the user's, so it is never
// uploaded anywhere else.

extension SyncEngine {
    /// The database a zone syncs with: the shared database for a zone another user owns (when the engine has
    /// one), the private database otherwise.
    func database(for zoneID: CloudRecord.ZoneID) -> any CloudDatabase {
        if zoneID.isShared, let sharedDatabase { return sharedDatabase }
        return database
    }

    /// Fetches the shared database's changes: zones shared with the user, changed or gone, then each changed
    /// zone's records until none are left.
    func fetchSharedChanges(complete: Bool) async throws {
        guard let sharedDatabase else { return }
        try await saveSharedSubscriptionIfNeeded(in: sharedDatabase)
        let known = Set(try await ledger.sharedZones())
        if complete {
            for zone in known { try await ledger.beginFullFetch(of: zone) }
        }
        var token = try await ledger.databaseToken(.shared)
        // Starting from nothing (the first sync, an expired token), the changes list every zone shared now: a zone
        // the store holds that isn't among them was lost while the device wasn't looking.
        var listed: Set<CloudRecord.ZoneID>? = token == nil ? [] : nil
        var removed: Set<CloudRecord.ZoneID> = []
        while true {
            guard let changes = try await databaseChanges(of: sharedDatabase, since: token) else {
                token = nil
                listed = []
                continue
            }
            listed?.formUnion(changes.modifiedZoneIDs)
            var lost = changes.deletions.map(\.zoneID).filter { known.contains($0) && !removed.contains($0) }
            if !changes.moreComing, let listed {
                lost += known.subtracting(listed).subtracting(removed).subtracting(lost)
                    .sorted { ($0.ownerName, $0.zoneName) < ($1.ownerName, $1.zoneName) }
            }
            // The losses and the page's token in one transaction: a loss is never behind the stored token with its
            // local copy still there. A zone shared again later in the pages is fetched from nothing.
            let discarded = try await ledger.applySharedDatabaseChanges(
                lost: lost, changedZones: changes.modifiedZoneIDs, token: changes.changeToken)
            removed.formUnion(lost)
            for (zone, count) in discarded { emit(.sharedZoneRemoved(zone, discardedChanges: count)) }
            token = changes.changeToken
            if !changes.moreComing { break }
        }
        for zone in try await ledger.sharedZones() {
            let state = try await ledger.zoneState(zone)
            if state.token == nil || state.needsFetch { try await fetchZoneChanges(zone) }
        }
    }

    /// The user can no longer see a shared zone: its local copy and the changes queued for it go, with an event.
    func lostAccess(to zoneID: CloudRecord.ZoneID) async throws {
        let discarded = try await ledger.removeSharedZone(zoneID)
        emit(.sharedZoneRemoved(zoneID, discardedChanges: discarded))
    }

    /// Saves the database subscription in the shared database too, so a push says when a share changed.
    private func saveSharedSubscriptionIfNeeded(in sharedDatabase: any CloudDatabase) async throws {
        guard let id = configuration.subscriptionID, try await !ledger.hasSavedSubscription(id, in: .shared) else {
            return
        }
        let subscription = CloudSubscription(id: id, kind: .database)
        do {
            let results = try await withRetries("modifySubscriptions") {
                try await sharedDatabase.modifySubscriptions(saving: [subscription], deleting: [])
            }
            if case .failure(let error)? = results.saveResults[id] { throw error }
            try await ledger.setSavedSubscription(id, in: .shared)
        } catch let error as CloudDatabaseError where !error.isRetryable {
            // Pushes only make syncs sooner; a shared database without subscriptions still syncs (by polling).
            return
        }
    }
}
