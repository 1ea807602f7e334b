import NestedCloudKitCodable

// Sharing from the engine: the owner shares a model, changes the share and stops sharing; a participant leaves.
// Each is a request to the database itself (CloudKit saves a new share with its root, in one request, which a
// queue of changes can't promise), and what the server answers is written to the store at once, as a fetch would.

extension SyncEngine {
    /// Shares a model's record and every record whose parent leads to it (see `CloudFieldOptions.parentField`),
    /// as the owner: the share is saved with the root, as CloudKit requires, and both are written to the store.
    ///
    /// ```swift
    /// let share = try await engine.share(CloudRecord.ID(recordName: "groceries", zoneID: lists)) { share in
    ///     share.title = "Groceries"
    ///     try share.addParticipant(.init(userRecordName: bobRecordName, permission: .readWrite))
    /// }
    /// print(share.url!)  // the link to send
    /// ```
    ///
    /// - Parameters:
    ///   - rootID: The root's record ID; the record must be on the server (synced), in a custom zone.
    ///   - configure: Sets the share's title, public permission and participants.
    /// - Returns: The share as the server saved it, with its URL.
    /// - Throws: `CloudDatabaseError` (`unknownItem` for a root the server doesn't have yet: sync first;
    ///   `serverRecordChanged` if the root changed on the server meanwhile: sync and try again), `CloudShareError`
    ///   for a share CloudKit refuses (the default zone), or what `configure` throws.
    @discardableResult
    public func share(
        _ rootID: CloudRecord.ID, _ configure: @Sendable (inout CloudShare) throws -> Void = { _ in }
    ) async throws -> CloudShare {
        let root = try await withRetries("record") { [database] in try await database.record(for: rootID) }
        var share = try CloudShare(rootRecord: root)
        try configure(&share)
        return try await save(share, with: [root])
    }

    /// Shares a whole custom zone, as its owner: every record of it, present and future.
    @discardableResult
    public func share(
        zone zoneID: CloudRecord.ZoneID, _ configure: @Sendable (inout CloudShare) throws -> Void = { _ in }
    ) async throws -> CloudShare {
        var share = try CloudShare(zoneID: zoneID)
        try configure(&share)
        return try await save(share, with: [])
    }

    /// Changes a share the user owns (its participants, their permissions, its public permission, its title), from
    /// the server's current copy.
    @discardableResult
    public func updateShare(
        _ shareID: CloudRecord.ID, _ change: @Sendable (inout CloudShare) throws -> Void
    ) async throws -> CloudShare {
        var share = try CloudShare(
            record: try await withRetries("record") { [database] in try await database.record(for: shareID) })
        try change(&share)
        return try await save(share, with: [])
    }

    /// Stops sharing: deletes the share, as its owner. Every participant loses access at their next sync; the
    /// records stay the owner's. The root's new version, without its share, arrives at the next sync.
    public func stopSharing(_ shareID: CloudRecord.ID) async throws {
        let results = try await withRetries("modifyRecords") { [database] in
            try await database.modifyRecords(
                saving: [], deleting: [shareID], savePolicy: .ifServerRecordUnchanged, atomically: false)
        }
        switch results.deleteResults[shareID] {
        case .success?: break
        case .failure(let error)? where error.code == .unknownItem: break
        case .failure(let error)?: throw error
        case nil: throw CloudDatabaseError.internalError("the server's answer left out the deletion of \(shareID)")
        }
        try await apply(FetchedPage(zoneID: shareID.zoneID, deletions: [shareID]))
    }

    /// Leaves a share another user owns, as a participant: deletes it from the shared database (the owner's copy
    /// marks the user removed). The next sync removes its records from the store, with
    /// ``SyncEvent/sharedZoneRemoved(_:discardedChanges:)`` once nothing of the zone is shared with the user any
    /// more.
    ///
    /// - Throws: ``SyncError/invalidConfiguration(_:)`` for an engine without a shared database.
    public func leaveShare(_ shareID: CloudRecord.ID) async throws {
        guard let sharedDatabase else {
            throw SyncError.invalidConfiguration(
                "leaving a share needs the user's shared database: make the engine with sharedDatabase:")
        }
        let results = try await withRetries("modifyRecords") {
            try await sharedDatabase.modifyRecords(
                saving: [], deleting: [shareID], savePolicy: .ifServerRecordUnchanged, atomically: false)
        }
        if case .failure(let error)? = results.deleteResults[shareID], error != .unknownItem(shareID) { throw error }
    }

    /// Reads a share from the server into the store, as a fetch would: after the system's sharing UI changed it
    /// (`UICloudSharingController` saves what the user does in it to CloudKit itself), so the store knows its
    /// participants and permissions at once. A share the server no longer has (the user stopped sharing in the
    /// controller) is removed from the store; its root's new version, without the share, comes with the next sync.
    ///
    /// ```swift
    /// func cloudSharingControllerDidSaveShare(_ controller: UICloudSharingController) {
    ///     Task { try await engine.refreshShare(shareID) }
    /// }
    /// ```
    ///
    /// - Parameter shareID: The share's record ID, in the database the user owns it in, or in the shared database
    ///   (under the owner's name) for a share another user owns.
    public func refreshShare(_ shareID: CloudRecord.ID) async throws {
        let source = database(for: shareID.zoneID)
        let results = try await withRetries("records") { try await source.records(for: [shareID], desiredKeys: nil) }
        switch results[shareID] {
        case .success(let record)?:
            try await apply(FetchedPage(zoneID: shareID.zoneID, modifications: [record]))
        case .failure(let error)? where error.code == .unknownItem:
            try await apply(FetchedPage(zoneID: shareID.zoneID, deletions: [shareID]))
        case .failure(let error)?:
            throw error
        case nil:
            throw CloudDatabaseError.internalError("the server's answer left out \(shareID)")
        }
    }

    /// Saves a share (with a new share's root) to the private database, and writes what the server answered to
    /// the store.
    private func save(_ share: CloudShare, with roots: [CloudRecord]) async throws -> CloudShare {
        let records = roots + [share.record]
        let results = try await withRetries("modifyRecords") { [database] in
            try await database.modifyRecords(
                saving: records, deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        }
        var saved: [CloudRecord] = []
        var failures: [CloudDatabaseError] = []
        for record in records {
            switch results.saveResults[record.id] {
            case .success(let server)?: saved.append(server)
            case .failure(let error)?: failures.append(error)
            case nil: failures.append(.internalError("the server's answer left out \(record.id)"))
            }
        }
        // The cause, not the items the atomic request failed because of it.
        if let failure = failures.first(where: { !$0.isBatchFailure }) ?? failures.first { throw failure }
        try await apply(FetchedPage(zoneID: share.id.zoneID, modifications: saved))
        guard let savedShare = saved.last else { throw CloudDatabaseError.internalError("no share was saved") }
        return try CloudShare(record: savedShare)
    }
}

extension CloudDatabaseError {
    /// Whether the item failed only because another item of its atomic request did.
    fileprivate var isBatchFailure: Bool {
        if self.code == .batchRequestFailed { true } else { false }
    }
}
