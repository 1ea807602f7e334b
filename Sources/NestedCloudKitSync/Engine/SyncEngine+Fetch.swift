import Foundation
import NestedCloudKitCodable

extension SyncEngine {
    /// Fetches the database's changes, then each changed zone's until none are left; zones without change tokens
    /// by modification date.
    func fetchChanges(complete: Bool) async throws {
        let tokenZones = try await zonesWithChangeTokens()
        if !tokenZones.isEmpty {
            // A complete sync fetches every zone from nothing, but still asks the database what changed since its
            // token: a zone deleted or purged meanwhile must be known before its records are fetched again.
            if complete {
                for zone in tokenZones { try await ledger.beginFullFetch(of: zone) }
            }
            var databaseToken = try await ledger.databaseToken()
            // Deletions are news only to a device that knew the database before them: one starting from nothing
            // (its first sync, an expired token) finds a zone that is gone when it fetches it.
            var knowsEarlierState = databaseToken != nil
            // Zones deleted in this fetch and not created again: nothing to fetch from them.
            var gone: Set<CloudRecord.ZoneID> = []
            while true {
                guard let changes = try await databaseChanges(of: database, since: databaseToken) else {
                    databaseToken = nil
                    knowsEarlierState = false
                    continue
                }
                // Deletions first: a zone deleted and created again since the token is listed in both, and what its
                // deletion asks for (after a purge, deleting the local copy) comes before fetching what it holds.
                var deletions:
                    [(zoneID: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason, response: ZoneDeletionResponse)] =
                        []
                for deletion in changes.deletions where knowsEarlierState && tokenZones.contains(deletion.zoneID) {
                    deletions.append(
                        (deletion.zoneID, deletion.reason, await configuration.zoneDeletionResponse(deletion)))
                    gone.insert(deletion.zoneID)
                }
                let changed = changes.modifiedZoneIDs.filter(tokenZones.contains)
                gone.subtract(changed)
                // The page's effects and its token in one transaction: never replayed over what the app saves next.
                try await ledger.applyDatabaseChanges(
                    deletions: deletions.map { ($0.zoneID, $0.response) }, changedZones: changed,
                    token: changes.changeToken)
                for deletion in deletions {
                    if deletion.response == .reuploadLocalData { try await createZone(deletion.zoneID) }
                    emit(.zoneDeleted(deletion.zoneID, reason: deletion.reason, action: deletion.response.action))
                }
                databaseToken = changes.changeToken
                if !changes.moreComing { break }
            }
            // Every zone not fetched to its end: new ones, ones a failure or a restart interrupted, changed ones.
            for zone in tokenZones where !gone.contains(zone) {
                let state = try await ledger.zoneState(zone)
                if state.token == nil || state.needsFetch { try await fetchZoneChanges(zone) }
            }
        }
        for zone in zones where !zone.hasChangeTokens { try await fetchByDate(zone, complete: complete) }
        try await fetchSharedChanges(complete: complete)
        try await fetchSkippedRecords()
    }

    /// A page of a database's changes since the token, the request retried; `nil` when the token expired (an event
    /// says so), for the caller to start again from nothing.
    func databaseChanges(
        of database: any CloudDatabase, since token: CloudChangeToken?
    ) async throws -> CloudDatabaseChanges? {
        do {
            return try await withRetries("databaseChanges") {
                try await database.databaseChanges(since: token, resultsLimit: configuration.fetchResultsLimit)
            }
        } catch let error as CloudDatabaseError where error.code == .changeTokenExpired && token != nil {
            emit(.changeTokenExpired(nil))
            return nil
        }
    }

    /// Fetches a zone's changes since its token, page by page, each page committed with its token.
    func fetchZoneChanges(_ zoneID: CloudRecord.ZoneID) async throws {
        let state = try await ledger.zoneState(zoneID)
        var token = state.token
        // A full fetch that was interrupted (a failure, a restart) goes on from its last page and still reconciles.
        var fullFetch = state.reconcilePending
        if token == nil, !fullFetch {
            try await ledger.beginFullFetch(of: zoneID)
            fullFetch = true
        }
        let database = database(for: zoneID)
        while true {
            enter(.fetching, zone: zoneID)
            let page: CloudRecordZoneChanges
            do {
                page = try await withRetries("recordZoneChanges", SyncLog.zone(zoneID)) { [token] in
                    try await database.recordZoneChanges(
                        inZoneWith: zoneID, since: token, desiredKeys: nil,
                        resultsLimit: configuration.fetchResultsLimit)
                }
            } catch let error as CloudDatabaseError where error.code == .changeTokenExpired && token != nil {
                // Start over from nothing, then delete what the server no longer has (never unsent records).
                emit(.changeTokenExpired(zoneID))
                try await ledger.beginFullFetch(of: zoneID)
                token = nil
                fullFetch = true
                continue
            } catch let error as CloudDatabaseError where error.code == .zoneNotFound {
                return try await zoneWasDeleted(zoneID, reason: .deleted)
            } catch let error as CloudDatabaseError where error.code == .userDeletedZone {
                return try await zoneWasDeleted(zoneID, reason: .purged)
            } catch let error as CloudDatabaseError where error.code == .encryptedDataReset {
                return try await zoneWasDeleted(zoneID, reason: .encryptedDataReset)
            }
            // A record the server couldn't give for a while: fail, and fetch the page again next time. One it can't
            // give at all (a record this client can't read): skipped, reported, and the sync goes on without it.
            let transient = page.modificationFailures.filter { $0.value.isRetryable }
            if !transient.isEmpty { throw CloudDatabaseError(combiningFetchFailures: transient) }
            countFetchedPage(
                in: zoneID, records: page.modifications.count + page.deletions.count, moreComing: page.moreComing)
            try await apply(
                FetchedPage(
                    zoneID: zoneID, modifications: page.modifications, deletions: page.deletions.map(\.id),
                    skipped: page.modificationFailures.mapValues { SyncError.database($0).description },
                    token: page.changeToken, finished: !page.moreComing))
            token = page.changeToken
            if !page.moreComing { break }
        }
        if fullFetch { try await reconcile(zoneID, recordTypes: nil) }
    }

    /// Applies fetched records and deletions with the token that covers them, resolving conflicts with local
    /// changes by the policy. A record the policy fails on is skipped (and reported): one record can't hold up the
    /// others, nor the uploads.
    func apply(_ page: FetchedPage) async throws {
        var page = page
        // A local write between the resolution and the commit makes the commit refuse; resolve again.
        for _ in 0..<8 {
            let states = try await ledger.pendingStates(page.modifications.map(\.id))
            var outcomes: [CloudRecord.ID: ConflictOutcome] = [:]
            var versions: [CloudRecord.ID: Int64] = [:]
            for server in page.modifications {
                guard let state = states[server.id], let stored = state.stored, state.conflicts(with: server) else {
                    continue
                }
                enter(.resolving, zone: page.zoneID)
                do {
                    outcomes[server.id] = try await ConflictResolver.resolve(
                        ConflictSides(server: server, local: stored), policy: configuration.conflictPolicy)
                    versions[server.id] = stored.version
                } catch let error as SyncError {
                    page.skipped[server.id] = error.description
                }
            }
            page.modifications.removeAll { page.skipped[$0.id] != nil }
            enter(.applying, zone: page.zoneID)
            guard
                let summary = try await ledger.commitFetched(
                    page, outcomes: outcomes, versions: versions, deletePolicy: configuration.deleteConflictPolicy)
            else { continue }
            report(summary, in: page.zoneID)
            for (id, reason) in page.skipped.sorted(by: { $0.key.recordName < $1.key.recordName }) {
                emit(.recordSkipped(id, reason: reason))
            }
            return
        }
        throw SyncError.store(
            "local writes kept changing records of \(page.zoneID) while their conflicts were resolved; sync again")
    }

    /// Fetches by ID the skipped records the app asked for again (``SyncStore/retryHaltedChanges()``): applied if
    /// they can be now, skipped again if not.
    func fetchSkippedRecords() async throws {
        let ids = try await ledger.skippedRecordsToFetch()
        guard !ids.isEmpty else { return }
        let limit = max(1, database.maximumItemsPerRequest)
        for zoneID in Set(ids.map(\.zoneID)).sorted(by: { $0.zoneName < $1.zoneName }) {
            let inZone = ids.filter { $0.zoneID == zoneID }
            for start in stride(from: 0, to: inZone.count, by: limit) {
                let chunk = Array(inZone[start..<min(start + limit, inZone.count)])
                let database = database(for: zoneID)
                enter(.fetching, zone: zoneID)
                let results = try await withRetries("records", ["records": "\(chunk.count)"]) {
                    try await database.records(for: chunk, desiredKeys: nil)
                }
                var page = FetchedPage(zoneID: zoneID)
                for id in chunk {
                    switch results[id] {
                    case .success(let record)?: page.modifications.append(record)
                    case .failure(let error)? where error.code == .unknownItem: page.deletions.append(id)
                    case .failure(let error)? where error.isRetryable: throw error
                    case .failure(let error)?: page.skipped[id] = SyncError.database(error).description
                    case nil: continue
                    }
                }
                countFetchedPage(
                    in: zoneID, records: page.modifications.count + page.deletions.count,
                    moreComing: start + limit < inZone.count)
                try await apply(page)
            }
        }
    }

    func report(_ summary: FetchSummary, in zoneID: CloudRecord.ZoneID) {
        if !summary.saved.isEmpty || !summary.deleted.isEmpty {
            emit(.fetchedChanges(SyncFetchedChanges(zoneID: zoneID, saved: summary.saved, deleted: summary.deleted)))
        }
        for resolution in summary.resolutions { emit(.conflictResolved(resolution)) }
    }

    private func reconcile(_ zoneID: CloudRecord.ZoneID, recordTypes: [String]?) async throws {
        enter(.applying, zone: zoneID)
        let summary = try await ledger.reconcileAfterFullFetch(
            of: zoneID, recordTypes: recordTypes, deletePolicy: configuration.deleteConflictPolicy)
        report(summary, in: zoneID)
    }

    /// A zone without change tokens: the records modified since the last fetch, type by type; and on schedule, the
    /// full set of record names, to find the records deleted on the server (kSyncEngine's method).
    private func fetchByDate(_ zone: SyncZone, complete: Bool) async throws {
        guard !zone.recordTypes.isEmpty else {
            throw SyncError.invalidConfiguration(
                "the zone \(zone.zoneID) has no change tokens, so it syncs by modification date, type by type: "
                    + "list its record types in SyncZone(_:recordTypes:)")
        }
        let state = try await ledger.zoneState(zone.zoneID)
        let fullCheck =
            complete
            || state.lastFullCheck.map { clock.now().timeIntervalSince($0) >= Self.seconds(zone.fullCheckInterval) }
                ?? true
        if fullCheck { try await ledger.beginFullFetch(of: zone.zoneID) }
        // A second of overlap: records saved in the same instant as the last one fetched aren't missed; fetching
        // one again changes nothing.
        let since = complete ? nil : state.modifiedAfter.map { $0.addingTimeInterval(-1) }
        for recordType in zone.recordTypes {
            let query = CloudQuery(
                recordType: recordType, predicate: since.map { .modified(after: $0) } ?? .all,
                sortDescriptors: [CloudQuery.SortDescriptor(.modificationDate)])
            try await forEachPage(of: query, in: zone.zoneID, desiredKeys: nil) { records, moreComing in
                self.countFetchedPage(in: zone.zoneID, records: records.count, moreComing: moreComing)
                let latest = records.compactMap(\.systemFields?.modificationDate).max()
                try await self.apply(
                    FetchedPage(zoneID: zone.zoneID, modifications: records, modifiedAfter: latest))
            }
        }
        guard fullCheck else { return }
        for recordType in zone.recordTypes {
            let query = CloudQuery(recordType: recordType)
            try await forEachPage(of: query, in: zone.zoneID, desiredKeys: [], includingFailures: true) { records, _ in
                try await self.ledger.markSeen(records.map(\.id), in: zone.zoneID)
            }
        }
        try await reconcile(zone.zoneID, recordTypes: zone.recordTypes)
    }

    /// - Parameter includingFailures: Also hand over the matches the server couldn't read, as records with their
    ///   ID only: a comparison of the full set must not take them for deleted.
    private func forEachPage(
        of query: CloudQuery, in zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, includingFailures: Bool = false,
        _ body: (_ records: [CloudRecord], _ moreComing: Bool) async throws -> Void
    ) async throws {
        let limit = configuration.fetchResultsLimit ?? 200
        enter(.fetching, zone: zoneID)
        var page = try await withRetries("records") {
            try await database.records(
                matching: query, inZoneWith: zoneID, desiredKeys: desiredKeys, resultsLimit: limit)
        }
        while true {
            // A record the query matched but couldn't read is skipped by a fetch by date (and by the next ones
            // until it changes); a full check counts it as present.
            try await body(
                page.matchResults.compactMap { id, result in
                    (try? result.get()) ?? (includingFailures ? CloudRecord(recordType: query.recordType, id: id) : nil)
                }, page.queryCursor != nil)
            guard let cursor = page.queryCursor else { return }
            enter(.fetching, zone: zoneID)
            page = try await withRetries("records") {
                try await database.records(continuingMatchFrom: cursor, desiredKeys: desiredKeys, resultsLimit: limit)
            }
        }
    }

    /// A synced zone is gone from the server: re-created with the local records, or deleted locally too, as
    /// ``SyncConfiguration/zoneDeletionResponse`` says.
    func zoneWasDeleted(_ zoneID: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason) async throws {
        // A shared zone the server no longer shows is access lost: never created again, nor uploaded elsewhere.
        if zoneID.isShared, sharedDatabase != nil { return try await lostAccess(to: zoneID) }
        let response = await configuration.zoneDeletionResponse(CloudZoneDeletion(zoneID: zoneID, reason: reason))
        switch response {
        case .deleteLocalData:
            try await ledger.deleteLocalData(in: zoneID)
        case .reuploadLocalData:
            _ = try await ledger.prepareZoneForReupload(zoneID)
            try await createZone(zoneID)
        }
        emit(.zoneDeleted(zoneID, reason: reason, action: response.action))
    }
}

extension CloudDatabaseError {
    /// The failures of records a fetch couldn't read, as one error.
    init(combiningFetchFailures failures: [CloudRecord.ID: CloudDatabaseError]) {
        if failures.count == 1, let only = failures.first {
            self = only.value
        } else {
            self = .partialFailure(failures)
        }
    }
}
