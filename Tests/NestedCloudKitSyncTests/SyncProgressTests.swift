import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

@testable import NestedCloudKitSync

/// A running sync says where it is: its phase, the pages and records fetched, the changes sent and still queued,
/// and a fraction once it can be known; its counts only grow, its last update is `finished` with the sync's totals,
/// and it publishes per page and batch, never per record.
@Suite("Sync: progress", .timeLimit(.minutes(2)))
struct SyncProgressTests {
    /// Every progress update of one sync, from a stream that keeps them all, subscribed before the sync starts.
    private func progress(
        of device: Device, complete: Bool = false
    ) async throws -> (updates: [SyncProgress], error: (any Error)?) {
        let stream = await device.engine.progress(bufferingPolicy: .unbounded)
        var thrown: (any Error)?
        do { try await device.sync(complete: complete) } catch { thrown = error }
        // Every update was given to the stream before the sync returned.
        var updates: [SyncProgress] = []
        for await update in stream {
            updates.append(update)
            if update.phase == .finished { break }
        }
        return (updates, thrown)
    }

    /// Whether no count ever went down from one update to the next.
    private func countsOnlyGrow(_ updates: [SyncProgress]) -> Bool {
        zip(updates, updates.dropFirst()).allSatisfy { earlier, later in
            later.pagesFetched >= earlier.pagesFetched && later.recordsFetched >= earlier.recordsFetched
                && later.changesSent >= earlier.changesSent
        }
    }

    private static func notes(_ count: Int) -> [Note] {
        (0..<count).map { Note(id: String(format: "n%02d", $0), title: "note \($0)", body: "") }
    }

    @Test(arguments: ScenarioServer.allCases)
    func aFirstSyncCountsEachPageAndRecordAndEndsWithItsTotals(_ server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let writer = try await scenario.device()
        for note in Self.notes(23) { try await writer.store.save(note) }
        try await writer.sync()
        let reader = try await scenario.device(
            SyncConfiguration(retry: SyncRetryPolicy(jitter: 0), fetchResultsLimit: 5))

        let (updates, error) = try await progress(of: reader)

        #expect(error == nil)
        #expect(updates.first == SyncProgress(phase: .account))
        #expect(
            updates.last
                == SyncProgress(
                    phase: .finished, zoneID: nil, pagesFetched: 5, recordsFetched: 23, moreComing: false,
                    changesSent: 0, changesQueued: 0))
        #expect(countsOnlyGrow(updates))
        // Each page as it arrives, with whether more are coming: the last page says none are.
        let pages: [SyncProgress] = zip(updates.dropFirst(), updates).compactMap { later, earlier in
            later.pagesFetched > earlier.pagesFetched ? later : nil
        }
        #expect(pages.map { $0.recordsFetched } == [5, 10, 15, 20, 23])
        #expect(pages.map { $0.moreComing } == [true, true, true, true, false])
        let zoneID = scenario.zoneID
        #expect(pages.allSatisfy { $0.phase == .applying && $0.zoneID == zoneID })
        // How much is left to fetch is unknown: no fraction until the sync sends.
        let beforeSending = updates.prefix { $0.phase != .sending }
        #expect(!beforeSending.isEmpty && beforeSending.allSatisfy { $0.fractionCompleted == nil })
        #expect(updates.last?.fractionCompleted == 1)
        // Per phase and per page, not per record: the phases before the fetch, two updates a page, the send.
        #expect(updates.count <= 3 + 2 * 5 + 2)
    }

    @Test(arguments: ScenarioServer.allCases)
    func sendingCountsWhatTheServerHasThroughARetryAndAHalt(_ server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let (device, client) = try await scenario.flakyDevice(
            SyncConfiguration(retry: SyncRetryPolicy(jitter: 0), maximumRecordFailures: 1))
        try await device.sync()
        for note in Self.notes(6) { try await device.store.save(note) }
        await client.fail(scenario.recordID("n01"), with: .requestRateLimited(retryAfter: 0), times: 1)
        await client.fail(scenario.recordID("n02"), with: .invalidArguments("refused"), times: 1)

        let (updates, error) = try await progress(of: device)

        #expect(error == nil)
        let sending = updates.filter { $0.changesQueued != nil }
        #expect(sending.first?.changesQueued == 6 && sending.first?.changesSent == 0)
        #expect(sending.first?.fractionCompleted == 0)
        // The halted change isn't counted as queued: it waits for the app, not for this sync.
        #expect(
            updates.last
                == SyncProgress(
                    phase: .finished, zoneID: nil, pagesFetched: 0, recordsFetched: 0, moreComing: false,
                    changesSent: 5, changesQueued: 0))
        #expect(countsOnlyGrow(updates))
        let fractions = sending.compactMap(\.fractionCompleted)
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(fractions.last == 1)
        #expect(try await device.store.pendingChanges().map(\.recordID.recordName) == ["n02"])
    }

    @Test(arguments: ScenarioServer.allCases)
    func aSyncThatLeavesAChangeQueuedEndsShortOfTheWholeFraction(_ server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let (device, client) = try await scenario.flakyDevice(
            SyncConfiguration(retry: SyncRetryPolicy(maximumAttempts: 1, jitter: 0)))
        try await device.sync()
        for note in Self.notes(4) { try await device.store.save(note) }
        await client.fail(scenario.recordID("n03"), with: .requestRateLimited(retryAfter: 0), times: 1)

        let (updates, error) = try await progress(of: device)

        #expect(error != nil)
        #expect(
            updates.last
                == SyncProgress(
                    phase: .finished, zoneID: nil, pagesFetched: 0, recordsFetched: 0, moreComing: false,
                    changesSent: 3, changesQueued: 1))
        #expect(updates.last?.fractionCompleted == 0.75)
    }

    @Test(arguments: ScenarioServer.allCases)
    func aFetchedRecordThatMeetsALocalChangeIsResolvedInItsOwnPhase(_ server: ScenarioServer) async throws {
        let scenario = try await server.scenario()
        let phone = try await scenario.device()
        let laptop = try await scenario.device()
        try await phone.store.save(Note(id: "shared", title: "first", body: ""))
        try await phone.sync()
        try await laptop.sync()
        try await phone.store.save(Note(id: "shared", title: "phone's", body: ""))
        try await phone.sync()
        try await laptop.store.save(Note(id: "shared", title: "first", body: "laptop's"))

        let (updates, error) = try await progress(of: laptop)

        #expect(error == nil)
        let resolving = updates.filter { $0.phase == .resolving }
        #expect(resolving.count == 1)
        #expect(resolving.first?.zoneID == scenario.zoneID && resolving.first?.fractionCompleted == nil)
        // Resolved, applied, then the merge sent.
        #expect(updates.last?.changesSent == 1 && updates.last?.recordsFetched == 1)
        #expect(try await laptop.note("shared") == Note(id: "shared", title: "phone's", body: "laptop's"))
    }

    @Test func aChangeTheServerRefusesForAConflictIsResolvedInItsOwnPhaseWhileSending() async throws {
        let scenario = Scenario()
        let phone = try await scenario.device()
        try await phone.store.save(Note(id: "shared", title: "first", body: ""))
        try await phone.sync()
        // The phone edits the note again between the laptop's fetch and its upload: the upload meets a conflict.
        let server = InterceptingDatabase(base: scenario.server) {
            try await phone.store.save(Note(id: "shared", title: "phone's", body: ""))
            try await phone.sync()
        }
        let laptop = try await Device(server: server, clock: scenario.clock)
        try await laptop.sync()
        try await laptop.store.save(Note(id: "shared", title: "first", body: "laptop's"))

        let (updates, error) = try await progress(of: laptop)

        #expect(error == nil)
        let phases = updates.map(\.phase)
        let resolving = try #require(phases.firstIndex(of: .resolving))
        #expect(phases[..<resolving].contains(.sending) && phases[resolving...].contains(.sending))
        #expect(updates[resolving].fractionCompleted != nil)
        #expect(updates.last?.changesSent == 1 && updates.last?.changesQueued == 0)
        #expect(try await laptop.note("shared") == Note(id: "shared", title: "phone's", body: "laptop's"))
    }

    @Test func aStreamOpenedDuringASyncStartsWhereTheSyncIsAndAClosedEngineFinishesIt() async throws {
        let scenario = Scenario()
        let store = try SyncStore.inMemory(clock: scenario.clock)
        try await store.save(Note(id: "a", title: "a", body: ""))
        let engine = Locked<SyncEngine?>(nil)
        let seen = Locked<SyncProgress?>(nil)
        let server = InterceptingDatabase(base: scenario.server) {
            // In the middle of the upload: a reader that comes now is told at once where the sync is.
            guard let engine = engine.withLock({ $0 }) else { return }
            var updates = await engine.progress().makeAsyncIterator()
            let first = await updates.next()
            seen.withLock { $0 = first }
        }
        let syncing = SyncEngine(store: store, database: server)
        engine.withLock { $0 = syncing }

        try await syncing.sync()

        let first = seen.withLock { $0 }
        #expect(first?.phase == .sending && first?.changesQueued == 1 && first?.changesSent == 0)
        await syncing.close()
        var afterClose = await syncing.progress().makeAsyncIterator()
        #expect(await afterClose.next() == nil)
    }

    @MainActor
    @Test func theObservedStateShowsTheRunningSyncsProgressAndNoneAfterIt() async throws {
        let scenario = Scenario()
        let store = try SyncStore.inMemory(clock: scenario.clock)
        try await store.save(Note(id: "a", title: "a", body: ""))
        let state = ObservedSyncState()
        let seen = Locked<SyncProgress?>(nil)
        let server = InterceptingDatabase(base: scenario.server) {
            // The upload waits until the view's state has caught up with the sync.
            for _ in 0..<100_000 {
                let shown = await MainActor.run { state.progress }
                if shown?.phase == .sending { return seen.withLock { $0 = shown } }
                await Task.yield()
            }
        }
        let engine = SyncEngine(store: store, database: server)
        state.engine = engine
        #expect(state.progress == nil)

        try await engine.sync()

        let shown = seen.withLock { $0 }
        #expect(shown?.changesQueued == 1 && shown?.changesSent == 0 && shown?.fractionCompleted == 0)
        var turns = 0
        while state.progress != nil || state.isSyncing, turns < 100_000 {
            turns += 1
            await Task.yield()
        }
        #expect(state.progress == nil && !state.isSyncing)
        await engine.close()
    }
}
