import NestedCloudKitCodable

extension SyncEngine {
    /// How many times one change is sent again at once in a sync (its batch failed because of another change, the
    /// error was transient, its zone was created again), so a server that keeps answering so can't hold the sync
    /// in a loop.
    static let maximumImmediateResends = 3
    /// How many conflicts of one record a sync resolves: a record the server keeps changing waits for the next sync.
    static let maximumConflictRounds = 4
    /// How many times a conflict's resolution is made again because the record changed locally meanwhile.
    static let maximumResolutionAttempts = 8

    /// What one sync's sending has done so far, across its batches.
    struct SendProgress {
        /// The versions of changes this sync has sent (or gave up on): the next batch is made of others.
        var attempted: Set<UploadKey> = []
        var resends: [UploadKey: Int] = [:]
        var conflictRounds: [CloudRecord.ID: Int] = [:]
        /// How many times each record's change failed for a reason that passes in this sync: each record is tried
        /// at most ``SyncRetryPolicy/maximumAttempts`` times, whatever happens to the others.
        var transientFailures: [CloudRecord.ID: Int] = [:]
        /// The zones this sync created again after the server lost them: once each.
        var recreatedZones: Set<CloudRecord.ZoneID> = []
        /// Changes this sync gave up on for now for a reason that may pass, and that reason: while one of them is
        /// still queued at the end, the sync ends with the reason, not as a success.
        var leftQueued: [CloudRecord.ID: CloudDatabaseError] = [:]
        /// The records the pending deletions' records referenced, read once a sync (``SyncLedger/nextUploads``).
        var deletionReferences = DeletionReferences()

        /// Makes a change part of a later batch of this sync again, at most ``maximumImmediateResends`` times; after
        /// that it is left queued with `reason`.
        mutating func sendAgain(_ key: UploadKey, because reason: CloudDatabaseError) {
            resends[key, default: 0] += 1
            if resends[key, default: 0] <= SyncEngine.maximumImmediateResends {
                attempted.remove(key)
            } else {
                leftQueued[key.id] = reason
            }
        }
    }

    /// Sends the pending changes in batches until none is left that this sync hasn't tried.
    ///
    /// - Throws: The reason a change this sync tried is still queued when nothing is left to try (a rate limit
    ///   that outlasted the retries, a conflict the server kept renewing, an answer the server never gave): a
    ///   sync never ends as a success while a change it sent is still waiting for a reason that may pass.
    func sendChanges() async throws {
        var progress = SendProgress()
        while true {
            let (uploads, references, queued) = try await ledger.nextUploads(
                limit: batchSize, excluding: progress.attempted, deletionReferences: progress.deletionReferences)
            progress.deletionReferences = references
            advance {
                $0.phase = .sending
                $0.zoneID = nil
                $0.changesQueued = queued
            }
            guard !uploads.isEmpty else { return try await checkNothingLeftQueued(progress) }
            try await ledger.markSent(uploads)
            // Changes to zones others share with the user go to the shared database, the rest to the private one.
            let shared = uploads.filter { $0.entry.id.zoneID.isShared && sharedDatabase != nil }
            let own = uploads.filter { !($0.entry.id.zoneID.isShared && sharedDatabase != nil) }
            for (batch, database) in [(own, database), (shared, sharedDatabase ?? database)] where !batch.isEmpty {
                guard let results = try await send(batch, to: database, progress: &progress) else { continue }
                progress.attempted.formUnion(batch.map(\.key))
                let outcome = UploadOutcome(batch, results: results, recreatedZones: progress.recreatedZones)
                for key in outcome.sendAgain { progress.sendAgain(key, because: Self.resendReason(key, in: results)) }
                for left in outcome.leftQueued { progress.leftQueued[left.upload.entry.id] = left.error }
                try await act(on: outcome, progress: &progress)
            }
        }
    }

    /// Sends one batch; `nil` when the request as a whole failed in a way this sync already handled (the batch
    /// was too large and is made smaller, a change too large for any batch was refused, the zone was created
    /// again), so the loop reads the next batch.
    private func send(
        _ uploads: [Upload], to database: any CloudDatabase, progress: inout SendProgress
    ) async throws -> CloudModifyResults? {
        let saves = uploads.compactMap(\.changes)
        let deletions = uploads.filter { $0.record == nil }.map(\.entry.id)
        let results: CloudModifyResults
        do {
            results = try await withRetries(
                "modifyRecords", ["saves": "\(saves.count)", "deletions": "\(deletions.count)"]
            ) {
                try await database.modifyRecords(
                    saving: saves, deleting: deletions, savePolicy: .ifServerRecordUnchanged, atomically: false)
            }
        } catch let error as CloudDatabaseError where error.code == .limitExceeded && uploads.count > 1 {
            batchSize = max(1, uploads.count / 2)
            return nil
        } catch let error as CloudDatabaseError where Self.isTooLarge(error) {
            // One change alone is too large (a record over 1 MB): retrying can't help, and it mustn't hold up
            // the changes behind it.
            for upload in uploads {
                progress.attempted.insert(upload.key)
                try await refuse(upload, error: error)
            }
            return nil
        } catch let error as CloudDatabaseError {
            guard let zone = UploadOutcome.lostZone(error), !progress.recreatedZones.contains(zone.zoneID) else {
                throw error
            }
            progress.recreatedZones.insert(zone.zoneID)
            try await zoneWasDeleted(zone.zoneID, reason: zone.reason)
            return nil
        }
        // Grow back slowly after a halving: a tenth at a time.
        batchSize = min(max(1, database.maximumItemsPerRequest), batchSize + max(1, batchSize / 10))
        return results
    }

    /// Acts on a batch's answer: acknowledges what the server has, resolves conflicts, applies the server's
    /// deletions, notes refusals, creates lost zones again; then stops on an error no change gets past, or waits
    /// after a transient one.
    private func act(on outcome: UploadOutcome, progress: inout SendProgress) async throws {
        let saved = outcome.saved.map { ($0.upload, $0.server) }
        try await ledger.acknowledge(saved: saved, deleted: outcome.deleted)
        if !saved.isEmpty || !outcome.deleted.isEmpty {
            // Until the next batch is read and the queue counted again: what the server has is no longer queued.
            advance {
                $0.changesSent += saved.count + outcome.deleted.count
                $0.changesQueued = max(0, ($0.changesQueued ?? 0) - saved.count - outcome.deleted.count)
            }
            emit(
                .sentChanges(
                    SyncSentChanges(
                        saved: outcome.saved.map(\.upload.entry.id), deleted: outcome.deleted.map(\.entry.id))))
        }
        for earlier in outcome.earlierUploads {
            // Sent again at once, on the change tag of the copy the server holds.
            try await ledger.adoptEarlierUpload(earlier.upload, server: earlier.server)
        }
        if !outcome.conflicts.isEmpty { enter(.resolving) }
        defer { enter(.sending) }
        for conflict in outcome.conflicts {
            let id = conflict.upload.entry.id
            progress.conflictRounds[id, default: 0] += 1
            guard progress.conflictRounds[id, default: 0] <= Self.maximumConflictRounds else {
                // The server keeps changing it: it waits for the next sync, and this one doesn't end as a success.
                progress.leftQueued[id] = .serverRecordChanged(
                    server: conflict.server, client: conflict.upload.record ?? conflict.server, ancestor: nil)
                continue
            }
            do {
                try await resolveConflict(server: conflict.server)
            } catch let error as SyncError {
                // The policy failed on it: it waits for the app, the other changes go on.
                try await ledger.skipConflict(conflict.upload, reason: error.description)
                emit(.recordSkipped(id, reason: error.description))
            }
        }
        for id in outcome.serverDeletions {
            let summary = try await ledger.applyServerDeletion(id, deletePolicy: configuration.deleteConflictPolicy)
            report(summary, in: id.zoneID)
        }
        for refused in outcome.refused { try await refuse(refused.upload, error: refused.error) }
        for zone in outcome.lostZones where !progress.recreatedZones.contains(zone.zoneID) {
            progress.recreatedZones.insert(zone.zoneID)
            try await zoneWasDeleted(zone.zoneID, reason: zone.reason)
        }
        if let halt = outcome.halt { throw halt }
        try await retry(outcome.transient, progress: &progress)
    }

    /// Counts each change's transient failure against that change alone, and makes it part of a later batch of
    /// this sync after one wait for all of them (the longest backoff any needs, at least the longest `retryAfter`).
    /// A change tried ``SyncRetryPolicy/maximumAttempts`` times ends the sync with its error; it stays queued.
    private func retry(_ failures: [UploadOutcome.Refused], progress: inout SendProgress) async throws {
        guard !failures.isEmpty else { return }
        var attempt = 0
        for failure in failures {
            let id = failure.upload.entry.id
            progress.transientFailures[id, default: 0] += 1
            let failed = progress.transientFailures[id, default: 0]
            guard failed < configuration.retry.maximumAttempts else { throw failure.error }
            progress.attempted.remove(failure.upload.key)
            attempt = max(attempt, failed)
        }
        let longest = failures.max { ($0.error.retryAfter ?? 0) < ($1.error.retryAfter ?? 0) }
        if let longest { try await wait(after: longest.error, attempt: attempt) }
    }

    /// Why a change is sent again at once: the failure the server answered it with.
    private static func resendReason(_ key: UploadKey, in results: CloudModifyResults) -> CloudDatabaseError {
        let result = results.saveResults[key.id].map { $0.map { _ in () } } ?? results.deleteResults[key.id]
        if case .failure(let error)? = result { return error }
        return .batchRequestFailed(key.id)
    }

    /// Ends the sending with the reason a change this sync left behind for a reason that may pass is still queued
    /// (not halted: a halted change has had its event, and waits for the app).
    private func checkNothingLeftQueued(_ progress: SendProgress) async throws {
        guard !progress.leftQueued.isEmpty else { return }
        let ids = progress.leftQueued.keys.sorted { $0.recordName < $1.recordName }
        let states = try await ledger.localStates(ids)
        for id in ids {
            guard let entry = states[id]?.outbox, !entry.halted, let reason = progress.leftQueued[id] else { continue }
            throw reason
        }
    }

    /// Notes a change the server refused; after ``SyncConfiguration/maximumRecordFailures`` in a row it is halted
    /// until the app saves the record again or calls ``SyncStore/retryHaltedChanges()``.
    private func refuse(_ upload: Upload, error: CloudDatabaseError) async throws {
        if error.isPermissionFailure, upload.entry.id.zoneID.isShared, try await revert(upload, because: error) {
            return
        }
        // A permission the share doesn't give is no better on the next attempt: halted at once.
        let halted = upload.entry.failures + 1 >= configuration.maximumRecordFailures || error.isPermissionFailure
        try await ledger.recordUploadFailure(upload, error: error, halt: halted)
        emit(.uploadFailed(upload.entry.id, error, halted: halted))
    }

    /// Puts the server's copy of a record back in place of a change to another user's shared record that the
    /// share no longer allows (made read-only, or narrowed, since the change was queued), and discards the change
    /// with an event that carries it: the user sees what the owner and every other participant see, and the app
    /// can tell them what didn't reach the owner. `false` if the server's copy can't be read now: the change is
    /// halted instead, as any refused change.
    private func revert(_ upload: Upload, because error: CloudDatabaseError) async throws -> Bool {
        let id = upload.entry.id
        let server: CloudRecord?
        do {
            let source = database(for: id.zoneID)
            let results = try await withRetries("records") { try await source.records(for: [id], desiredKeys: nil) }
            switch results[id] {
            case .success(let record)?: server = record
            case .failure(let error)? where error.code == .unknownItem: server = nil
            default: return false
            }
        } catch is CloudDatabaseError {
            return false
        }
        let outcome = try await ledger.revertRefusedChange(upload, toServerCopy: server)
        if outcome.reverted { emit(.changeReverted(id, because: error, discarded: outcome.discarded)) }
        return true
    }

    private static func isTooLarge(_ error: CloudDatabaseError) -> Bool {
        if error.code == .limitExceeded { true } else { false }
    }

    /// Resolves a save's conflict with the server's record and writes the outcome; a record changed locally
    /// meanwhile is resolved again from its new state.
    private func resolveConflict(server: CloudRecord) async throws {
        for _ in 0..<Self.maximumResolutionAttempts {
            guard let state = try await ledger.localStates([server.id])[server.id], let stored = state.stored,
                state.outbox?.operation == .save
            else { return }
            let outcome = try await ConflictResolver.resolve(
                ConflictSides(server: server, local: stored), policy: configuration.conflictPolicy)
            if try await ledger.commitResolution(outcome, server: server, version: stored.version) {
                return emit(.conflictResolved(ConflictResolution(recordID: server.id, decision: outcome.decision)))
            }
        }
    }
}
