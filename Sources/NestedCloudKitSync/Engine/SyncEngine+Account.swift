import NestedCloudKitCodable

extension SyncEngine {
    /// Checks that the signed-in user is the one whose data the store holds (Seam3's
    /// `verifyCloudKitConnectionAndUser`), and applies the account-change policy if not.
    func checkAccount() async throws {
        let status = try await withRetries("accountStatus") { try await database.accountStatus() }
        accountStatus = status
        let current: String?
        switch status {
        case .available: current = try await withRetries("userRecordName") { try await database.userRecordName() }
        case .noAccount: current = nil
        case .restricted, .temporarilyUnavailable, .couldNotDetermine:
            throw SyncError.halted(.accountUnavailable(status))
        }
        let previous = try await ledger.syncedUserRecordName()
        guard let previous else {
            guard let current else { throw SyncError.halted(.accountUnavailable(.noAccount)) }
            // The first sync: the local data, and whatever is queued, belongs to this user from now on.
            return try await ledger.setSyncedUserRecordName(current)
        }
        guard previous != current else { return }
        switch configuration.accountChangePolicy {
        case .resetLocalStore:
            try await store.resetLocalStore()
            emit(.accountChanged(previous: previous, current: current, action: .resetLocalStore))
            guard let current else { throw SyncError.halted(.accountUnavailable(.noAccount)) }
            try await ledger.setSyncedUserRecordName(current)
        case .pause:
            let reason = SyncHaltReason.accountChanged(previous: previous, current: current)
            pausedReason = reason
            emit(.accountChanged(previous: previous, current: current, action: .paused))
            throw SyncError.halted(reason)
        }
    }

    /// Deletes the local data of the previous user and syncs the current user's from now on; ends a pause after an
    /// account change.
    ///
    /// - Throws: ``SyncError``, if the current user can't be read.
    public func resetLocalStoreForCurrentAccount() async throws {
        // Not in the middle of a sync (or a discard): its answers would write the previous user's data into the
        // new store.
        await waitUntilQuiet()
        let current = try await currentUser()
        let previous = try await ledger.syncedUserRecordName()
        try await store.resetLocalStore()
        try await ledger.setSyncedUserRecordName(current)
        pausedReason = nil
        emit(.accountChanged(previous: previous, current: current, action: .resetLocalStore))
    }

    /// Keeps the local data, pending changes included, and uploads all of it to the current user's account; ends a
    /// pause after an account change. Only when the user asked for it: the data was another account's.
    ///
    /// - Throws: ``SyncError``, if the current user can't be read.
    public func adoptCurrentAccount() async throws {
        await waitUntilQuiet()
        let current = try await currentUser()
        let previous = try await ledger.syncedUserRecordName()
        // Every zone starts over in the new account: created again, fetched from nothing, its records uploaded.
        var zoneIDs = zones.map(\.zoneID)
        for zone in try await ledger.zonesWithData() where !zoneIDs.contains(zone) { zoneIDs.append(zone) }
        for zone in zoneIDs {
            // What others shared with the previous user isn't the new account's to upload.
            if zone.isShared, sharedDatabase != nil {
                try await lostAccess(to: zone)
            } else {
                _ = try await ledger.prepareZoneForReupload(zone)
            }
        }
        try await ledger.setDatabaseToken(nil)
        try await ledger.setDatabaseToken(nil, .shared)
        try await ledger.forgetSavedSubscription()
        try await ledger.setSyncedUserRecordName(current)
        pausedReason = nil
        emit(.accountChanged(previous: previous, current: current, action: .adopted))
    }

    /// The signed-in user's record name, with retries, failures as ``SyncError``.
    private func currentUser() async throws -> String {
        do {
            return try await withRetries("userRecordName") { try await database.userRecordName() }
        } catch {
            throw Self.syncError(error)
        }
    }

    /// Creates the synced zones that don't exist yet, and the database subscription.
    func prepareZones() async throws {
        for zone in try await zonesWithChangeTokens() {
            guard try await !ledger.zoneState(zone).created else { continue }
            try await createZone(zone)
        }
        try await saveSubscriptionIfNeeded()
    }

    /// The custom zones of the private database synced: the configured ones, and any other the app saved records
    /// in (a zone the configuration forgot is synced rather than uploaded to and never fetched).
    func zonesWithChangeTokens() async throws -> [CloudRecord.ZoneID] {
        var zoneIDs = zones.filter(\.hasChangeTokens).map(\.zoneID)
        for zone in try await ledger.zonesWithData()
        where zone.zoneName != CloudRecord.ZoneID.defaultZoneName && !zoneIDs.contains(zone)
            // Shared zones sync with the shared database (``fetchSharedChanges(complete:)``); never created here.
            && !(zone.isShared && sharedDatabase != nil)
        {
            zoneIDs.append(zone)
        }
        return zoneIDs
    }

    func createZone(_ zoneID: CloudRecord.ZoneID) async throws {
        let results = try await withRetries("modifyRecordZones") {
            try await database.modifyRecordZones(saving: [zoneID], deleting: [])
        }
        if case .failure(let error)? = results.saveResults[zoneID] { throw error }
        try await ledger.updateZoneState(zoneID) { $0.created = true }
    }

    private func saveSubscriptionIfNeeded() async throws {
        guard let id = configuration.subscriptionID, zones.contains(where: \.hasChangeTokens),
            try await !ledger.hasSavedSubscription(id)
        else { return }
        let subscription = CloudSubscription(id: id, kind: .database)
        do {
            let results = try await withRetries("modifySubscriptions") {
                try await database.modifySubscriptions(saving: [subscription], deleting: [])
            }
            if case .failure(let error)? = results.saveResults[id] { throw error }
            try await ledger.setSavedSubscription(id)
        } catch let error as CloudDatabaseError {
            // Pushes only make syncs sooner; a database without subscriptions still syncs (by polling).
            switch error.kind {
            case .quotaExceeded, .notAuthenticated, .requestRateLimited, .serviceUnavailable, .networkFailure,
                .serverResponseLost, .accountTemporarilyUnavailable:
                throw error
            default: return
            }
        }
    }
}
