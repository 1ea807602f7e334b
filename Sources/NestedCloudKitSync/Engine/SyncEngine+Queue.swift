import NestedCloudKitCodable

extension SyncEngine {
    /// Discards a change the server doesn't have, as a user asks for on a screen of what waits to sync: the record
    /// is put back as the server has it now (read from the server first; removed locally if the server has none),
    /// the change leaves the queue, and ``SyncEvent/changeDiscarded(_:discarded:)`` carries the record as the user
    /// had saved it. The user's change is gone for good: offer it only for a change they chose to give up, a halted
    /// one most often (``PendingChange/isHalted``).
    ///
    /// It waits for a running sync to end, and no sync starts until it is done: an upload of the change can't be
    /// on its way while it is discarded.
    ///
    /// - Returns: `false` if the record had no pending change (the server has it already, say), or if the user saved
    ///   the record again while its server copy was read: that newer change stays queued.
    /// - Throws: ``SyncError`` if the server's copy can't be read (offline, say), ``SyncError/halted(_:)`` while the
    ///   engine is paused after an account change, ``SyncError/closed``: the change stays queued.
    @discardableResult
    public func discardPendingChange(_ id: CloudRecord.ID) async throws -> Bool {
        await waitUntilQuiet()
        guard !isClosed else { throw SyncError.closed }
        // Paused after an account change: the server's copy would be the new account's, the store the old one's.
        if let pausedReason { throw SyncError.halted(pausedReason) }
        let work = Task { try await self.discardNow(id) }
        exclusiveWork = Task { _ = try? await work.value }
        defer { exclusiveWork = nil }
        return try await work.value
    }

    private func discardNow(_ id: CloudRecord.ID) async throws -> Bool {
        guard let entry = try await ledger.localStates([id])[id]?.outbox else { return false }
        let source = database(for: id.zoneID)
        let server: CloudRecord?
        do {
            let results = try await withRetries("records", SyncLog.record(id)) {
                try await source.records(for: [id], desiredKeys: nil)
            }
            switch results[id] {
            case .success(let record)?: server = record
            case .failure(let error)? where error.code == .unknownItem: server = nil
            case nil: server = nil
            case .failure(let error)?: throw error
            }
        } catch {
            throw Self.syncError(error)
        }
        let outcome = try await ledger.revertRefusedChange(Upload(entry: entry, record: nil), toServerCopy: server)
        guard outcome.reverted else { return false }
        emit(.changeDiscarded(id, discarded: outcome.discarded))
        return true
    }
}
