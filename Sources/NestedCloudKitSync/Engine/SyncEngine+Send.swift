import NestedCloudKitCodable

extension SyncEngine {
    /// Sends the pending changes in batches until none is left that this sync hasn't tried.
    func sendChanges() async throws {
        var attempted: Set<UploadKey> = []
        var rounds: [CloudRecord.ID: Int] = [:]
        var transientFailures = 0
        var recreatedZones: Set<CloudRecord.ZoneID> = []
        // A change sent again at once (its batch failed because of another, or its zone was re-created) is sent
        // again a bounded number of times, so a server that keeps answering so can't hold the sync in a loop.
        var resends: [UploadKey: Int] = [:]
        func sendAgain(_ key: UploadKey) {
            resends[key, default: 0] += 1
            if resends[key, default: 0] <= 3 { attempted.remove(key) }
        }
        while true {
            let uploads = try await store.nextUploads(limit: batchSize, excluding: attempted)
            guard !uploads.isEmpty else { return }
            let saves = uploads.compactMap(\.record)
            let deletions = uploads.filter { $0.record == nil }.map(\.entry.id)
            try await store.markSent(uploads)
            let results: CloudModifyResults
            do {
                results = try await withRetries {
                    try await database.modifyRecords(
                        saving: saves, deleting: deletions, savePolicy: .ifServerRecordUnchanged, atomically: false)
                }
            } catch CloudDatabaseError.limitExceeded where uploads.count > 1 {
                batchSize = max(1, uploads.count / 2)
                continue
            } catch let error as CloudDatabaseError where Self.isTooLarge(error) {
                // One change alone is too large (a record over 1 MB): retrying can't help, and it mustn't hold up
                // the changes behind it.
                for upload in uploads {
                    attempted.insert(upload.key)
                    try await refuse(upload, error: error)
                }
                continue
            } catch let error as CloudDatabaseError {
                guard let zone = Self.lostZone(error), !recreatedZones.contains(zone.zoneID) else { throw error }
                recreatedZones.insert(zone.zoneID)
                try await zoneWasDeleted(zone.zoneID, reason: zone.reason)
                continue
            }
            // Grow back slowly after a halving: a tenth at a time.
            batchSize = min(max(1, database.maximumItemsPerRequest), batchSize + max(1, batchSize / 10))

            var saved: [(Upload, CloudRecord)] = []
            var deleted: [Upload] = []
            var conflicts: [(Upload, CloudRecord)] = []
            var earlierUploads: [(Upload, CloudRecord)] = []
            var serverDeletions: [CloudRecord.ID] = []
            var lostZones: [(zoneID: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason)] = []
            var transient: CloudDatabaseError?
            var halt: CloudDatabaseError?
            var refused: [(Upload, CloudDatabaseError)] = []
            for upload in uploads {
                attempted.insert(upload.key)
                let id = upload.entry.id
                let result: Result<Void, CloudDatabaseError>?
                if let record = upload.record {
                    switch results.saveResults[id] {
                    case .success(let server)?:
                        saved.append((upload, server))
                        continue
                    case .failure(.serverRecordChanged(let server, _, _))?:
                        // Our own write whose answer was lost reads as a conflict: with the same fields (assets by
                        // contents), or as an earlier upload this one goes on top of.
                        if AssetFiles.sameContents(server.fields, record.fields) {
                            saved.append((upload, server))
                        } else if upload.entry.isSentCopy(server) {
                            earlierUploads.append((upload, server))
                        } else {
                            conflicts.append((upload, server))
                        }
                        continue
                    case .failure(.unknownItem)? where record.systemFields != nil:
                        serverDeletions.append(id)
                        continue
                    case let other?: result = other.map { _ in () }
                    case nil: result = nil
                    }
                } else {
                    switch results.deleteResults[id] {
                    case .success?, .failure(.unknownItem)?:
                        deleted.append(upload)
                        continue
                    case let other?: result = other
                    case nil: result = nil
                    }
                }
                guard case .failure(let error)? = result else {
                    // No answer for it: try again in the next sync rather than loop in this one.
                    continue
                }
                switch error {
                case .batchRequestFailed:
                    sendAgain(upload.key)
                case let error where error.isRetryable:
                    sendAgain(upload.key)
                    transient = error
                case .quotaExceeded, .permissionFailure, .notAuthenticated:
                    halt = error
                case let error where Self.lostZone(error) != nil:
                    guard let zone = Self.lostZone(error), !recreatedZones.contains(zone.zoneID) else {
                        // Lost again right after being re-created: left for the next sync.
                        continue
                    }
                    sendAgain(upload.key)
                    if !lostZones.contains(where: { $0.zoneID == zone.zoneID }) { lostZones.append(zone) }
                default:
                    refused.append((upload, error))
                }
            }

            try await store.acknowledge(saved: saved, deleted: deleted)
            if !saved.isEmpty || !deleted.isEmpty {
                emit(.sentChanges(SyncSentChanges(saved: saved.map(\.0.entry.id), deleted: deleted.map(\.entry.id))))
            }
            for (upload, server) in earlierUploads {
                // Sent again at once, on the change tag of the copy the server holds.
                try await store.adoptEarlierUpload(upload, server: server)
            }
            for (upload, server) in conflicts {
                rounds[upload.entry.id, default: 0] += 1
                // A record the server keeps changing waits for the next sync instead of looping in this one.
                guard rounds[upload.entry.id, default: 0] <= 4 else { continue }
                do {
                    try await resolveConflict(server: server)
                } catch let error as SyncError {
                    // The policy failed on it: it waits for the app, the other changes go on.
                    try await store.skipConflict(upload, reason: error.description)
                    emit(.recordSkipped(upload.entry.id, reason: error.description))
                }
            }
            for id in serverDeletions {
                let summary = try await store.applyServerDeletion(id, deletePolicy: configuration.deleteConflictPolicy)
                report(summary, in: id.zoneID)
            }
            for (upload, error) in refused { try await refuse(upload, error: error) }
            for zone in lostZones where !recreatedZones.contains(zone.zoneID) {
                recreatedZones.insert(zone.zoneID)
                try await zoneWasDeleted(zone.zoneID, reason: zone.reason)
            }
            if let halt { throw halt }
            if let transient {
                transientFailures += 1
                guard transientFailures < configuration.retry.maximumAttempts else { throw transient }
                try await wait(after: transient, attempt: transientFailures)
            }
        }
    }

    /// Notes a change the server refused; after ``SyncConfiguration/maximumRecordFailures`` in a row it is halted
    /// until the app saves the record again or calls ``SyncStore/retryHaltedChanges()``.
    private func refuse(_ upload: Upload, error: CloudDatabaseError) async throws {
        let halted = upload.entry.failures + 1 >= configuration.maximumRecordFailures
        try await store.recordUploadFailure(upload, error: error, halt: halted)
        emit(.uploadFailed(upload.entry.id, error, halted: halted))
    }

    private static func isTooLarge(_ error: CloudDatabaseError) -> Bool {
        if case .limitExceeded = error { true } else { false }
    }

    /// Resolves a save's conflict with the server's record and writes the outcome; a record changed locally
    /// meanwhile is resolved again from its new state.
    private func resolveConflict(server: CloudRecord) async throws {
        for _ in 0..<8 {
            guard let state = try await store.localStates([server.id])[server.id], let stored = state.stored,
                state.outbox?.operation == .save
            else { return }
            let outcome = try await ConflictResolver.resolve(
                ConflictSides(server: server, local: stored), policy: configuration.conflictPolicy)
            if try await store.commitResolution(outcome, server: server, version: stored.version) {
                return emit(.conflictResolved(ConflictResolution(recordID: server.id, decision: outcome.decision)))
            }
        }
    }

    /// The zone an error says is gone from the server, and why.
    static func lostZone(_ error: CloudDatabaseError) -> (zoneID: CloudRecord.ZoneID, reason: CloudZoneDeletion.Reason)?
    {
        switch error {
        case .zoneNotFound(let zone): (zone, .deleted)
        case .userDeletedZone(let zone): (zone, .purged)
        case .encryptedDataReset(let zone): (zone, .encryptedDataReset)
        default: nil
        }
    }
}
