import Foundation
import NestedCloudKitCodable

extension SyncEngine {
    /// A new stream of where each sync is from now on: the running sync's progress at once, if one runs, then an
    /// update when its phase changes and once per page fetched or batch sent, ending each sync with
    /// ``SyncProgress/Phase/finished``. Each caller gets its own; the streams finish when the engine is closed.
    ///
    /// ```swift
    /// for await progress in await engine.progress() {
    ///     statusLine = progress.fractionCompleted.map { "Sending, \(Int($0 * 100))%" }
    ///         ?? "Fetching: \(progress.recordsFetched) records"
    /// }
    /// ```
    ///
    /// A stream keeps only the newest update its reader hasn't taken: a slow reader sees the latest state, never a
    /// backlog. (The engine doesn't wait for readers: a sync with a progress reader runs as fast as one without.)
    public func progress() -> AsyncStream<SyncProgress> {
        progress(bufferingPolicy: .bufferingNewest(1))
    }

    /// A stream of progress with the given buffering: the tests read every update.
    func progress(
        bufferingPolicy: AsyncStream<SyncProgress>.Continuation.BufferingPolicy
    ) -> AsyncStream<SyncProgress> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncProgress.self, bufferingPolicy: bufferingPolicy)
        guard !isClosed else {
            continuation.finish()
            return stream
        }
        let id = UUID()
        progressContinuations[id] = continuation
        if let currentProgress { continuation.yield(currentProgress) }
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeProgressContinuation(id) }
        }
        return stream
    }

    private func removeProgressContinuation(_ id: UUID) {
        progressContinuations[id] = nil
    }

    /// Starts a sync's progress at its first phase.
    func beginProgress(_ phase: SyncProgress.Phase) {
        currentProgress = SyncProgress(phase: phase)
        publishProgress()
    }

    /// Moves the running sync to another phase (and zone); nothing is published if neither changes.
    func enter(_ phase: SyncProgress.Phase, zone zoneID: CloudRecord.ZoneID? = nil) {
        advance {
            $0.phase = phase
            $0.zoneID = zoneID
        }
    }

    /// Counts a page of fetched changes, and moves to applying it.
    func countFetchedPage(in zoneID: CloudRecord.ZoneID, records: Int, moreComing: Bool) {
        advance {
            $0.phase = .applying
            $0.zoneID = zoneID
            $0.pagesFetched += 1
            $0.recordsFetched += records
            $0.moreComing = moreComing
        }
    }

    /// Updates the running sync's progress; nothing is published if nothing changed.
    func advance(_ change: (inout SyncProgress) -> Void) {
        guard var progress = currentProgress else { return }
        change(&progress)
        guard progress != currentProgress else { return }
        currentProgress = progress
        publishProgress()
    }

    /// Ends the running sync's progress with ``SyncProgress/Phase/finished``.
    func finishProgress() {
        advance {
            $0.phase = .finished
            $0.zoneID = nil
            $0.moreComing = false
        }
        currentProgress = nil
    }

    private func publishProgress() {
        guard let currentProgress else { return }
        for continuation in progressContinuations.values { continuation.yield(currentProgress) }
    }
}
