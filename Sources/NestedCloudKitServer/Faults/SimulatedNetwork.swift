import Foundation
import NestedCloudKitCodable

/// The network between a test and its database, as the test sets it: how long each request waits, which request
/// or record fails and how, which response is lost, and what was asked. The one fault API of the package:
/// `InMemoryCloudDatabase.network` and ``FaultInjectingDatabase/network`` are each one of these.
///
/// ```swift
/// let server = InMemoryCloudDatabase()
/// server.network.loseNextResponse(to: .modify)                 // the upload is applied, its answer lost
/// server.network.failRecord(noteID, with: .quotaExceeded)      // that record alone fails
/// #expect(server.network.statistics.modifyRequests == 1)
/// ```
///
/// Every request passes through it: it is numbered and counted, waits out the latency on the database's clock, is
/// refused when a test asked for a fault or it holds more than the limit, and its response is lost when a test
/// asked for that. The simulated server's users share its one network, and so its numbers, counts and faults.
public final class SimulatedNetwork: Sendable {
    private struct State: Sendable {
        var statistics = CloudRequestStatistics()
        /// Every request ever made, counted without resets: faults aim at these numbers, so that a reset of the
        /// statistics moves no fault onto another request, one in flight included.
        var sequence = 0
        /// The sequence when the statistics were last reset: request `n` of the statistics is `offset + n`.
        var offset = 0
        var faults = RequestFaults()
        var latency: Duration
    }

    private let state: Locked<State>
    private let clock: any CloudClock

    init(latency: Duration, clock: any CloudClock) {
        state = Locked(State(latency: latency))
        self.clock = clock
    }

    /// What the databases have been asked so far.
    public var statistics: CloudRequestStatistics { state.withLock { $0.statistics } }

    /// How long each request waits before it is answered, as a network round trip would.
    public var latency: Duration {
        get { state.withLock { $0.latency } }
        set { state.withLock { $0.latency = newValue } }
    }

    /// Runs a request: counts it as it arrives, waits out the latency, fails it with the fault a test asked for or
    /// for holding more items than `maximum`, runs `body`, and loses its response when a test asked for that.
    package func request<Response>(
        _ kind: CloudRequestKind, items: Int, maximum: Int, _ body: @Sendable () async throws -> Response
    ) async throws -> Response {
        let number = state.withLock { state in
            state.statistics.requests += 1
            state.statistics[keyPath: kind.counter] += 1
            state.sequence += 1
            return state.sequence
        }
        let latency = self.latency
        if latency > .zero { try await clock.sleep(for: latency) }
        try state.withLock { state in
            if let fault = state.faults.failure(ofRequest: number, kind: kind) { throw fault }
            guard items <= maximum else {
                state.faults.requestRefused(number)
                throw CloudDatabaseError.limitExceeded(limit: maximum, requested: items)
            }
            state.faults.requestTakesEffect(number, kind: kind)
        }
        let response = try await body()
        if state.withLock({ $0.faults.takeLostResponse(number) }) { throw CloudDatabaseError.serverResponseLost }
        return response
    }

    /// The failure a test asked for of the next request naming this record, taken.
    package func takeFailure(of id: CloudRecord.ID) -> CloudDatabaseError? {
        state.withLock { $0.faults.takeFailure(of: id) }
    }

    /// Counts what a request did.
    package func count(_ change: (inout CloudRequestStatistics) -> Void) {
        state.withLock { change(&$0.statistics) }
    }

    // MARK: What a test asks for

    /// Makes the request with the given number (from 1, in the order requests arrive since the statistics started or
    /// were last reset) fail with `error`.
    public func failRequest(number: Int, with error: CloudDatabaseError) {
        state.withLock { $0.faults.byNumber[$0.offset + number] = error }
    }

    /// Makes the next request fail with `error`.
    public func failNextRequest(with error: CloudDatabaseError) {
        state.withLock { $0.faults.byNumber[$0.sequence + 1] = error }
    }

    /// Makes the next request fail as CloudKit throttles: `requestRateLimited` with a retry-after interval.
    public func throttleNextRequest(retryAfter: TimeInterval) {
        failNextRequest(with: .requestRateLimited(retryAfter: retryAfter))
    }

    /// Makes the next request fail as a dropped connection does: a network failure.
    public func dropNextConnection() {
        failNextRequest(with: .networkFailure("the connection was lost"))
    }

    /// Makes the next request of a kind fail with `error`, whatever requests come before it.
    public func failNextRequest(to kind: CloudRequestKind, with error: CloudDatabaseError) {
        state.withLock { $0.faults.byKind[kind, default: []].append(error) }
    }

    /// Makes a record fail with `error` the next time a request fetches, saves or deletes it.
    public func failRecord(_ id: CloudRecord.ID, with error: CloudDatabaseError) {
        state.withLock { $0.faults.byRecord[id] = error }
    }

    /// Makes the next request take effect, then fail as if its response were lost
    /// (`CloudDatabaseError.serverResponseLost`).
    public func loseNextResponse() {
        state.withLock { _ = $0.faults.lostResponses.insert($0.sequence + 1) }
    }

    /// Makes the next request of a kind take effect, then lose its response, whatever requests come before it.
    public func loseNextResponse(to kind: CloudRequestKind) {
        state.withLock { $0.faults.lostResponsesByKind[kind, default: 0] += 1 }
    }

    /// Starts the counts again from zero, the requests' numbers with them. A fault aimed at a request by its number
    /// (``failRequest(number:with:)``, ``failNextRequest(with:)``, ``loseNextResponse()``) still aims at the same
    /// request, under its new number, and a request in flight keeps its faults.
    public func resetStatistics() {
        state.withLock { state in
            state.offset = state.sequence
            state.statistics = CloudRequestStatistics()
        }
    }
}
