import Foundation
import NestedCloudKitCodable

/// What every request to a test's database passes through, written once for the simulated server and for
/// ``FaultInjectingDatabase``: it is numbered and counted, waits out the latency, is refused when a test asked for a
/// fault or it holds more than the limit, and its response is lost when a test asked for that. One gate may serve
/// several databases (the simulated server's users), which then share its numbers, counts and faults.
package final class RequestGate: Sendable {
    private struct State: Sendable {
        var statistics = CloudRequestStatistics()
        var faults = RequestFaults()
        var latency: Duration
    }

    private let state: Locked<State>
    private let clock: any CloudClock

    package init(latency: Duration, clock: any CloudClock) {
        state = Locked(State(latency: latency))
        self.clock = clock
    }

    /// What the databases have been asked.
    package var statistics: CloudRequestStatistics { state.withLock { $0.statistics } }

    /// How long each request waits before it is answered.
    package var latency: Duration {
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
            return state.statistics.requests
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

    /// Makes the request with the given number fail with `error`.
    package func failRequest(number: Int, with error: CloudDatabaseError) {
        state.withLock { $0.faults.byNumber[number] = error }
    }

    /// Makes the next request fail with `error`.
    package func failNextRequest(with error: CloudDatabaseError) {
        state.withLock { $0.faults.byNumber[$0.statistics.requests + 1] = error }
    }

    /// Makes the next request of a kind fail with `error`, whatever requests come before it.
    package func failNextRequest(to kind: CloudRequestKind, with error: CloudDatabaseError) {
        state.withLock { $0.faults.byKind[kind, default: []].append(error) }
    }

    /// Makes a record fail with `error` the next time a request fetches, saves or deletes it.
    package func failRecord(_ id: CloudRecord.ID, with error: CloudDatabaseError) {
        state.withLock { $0.faults.byRecord[id] = error }
    }

    /// Makes the next request take effect, then lose its response.
    package func loseNextResponse() {
        state.withLock { $0.faults.lostResponses.insert($0.statistics.requests + 1) }
    }

    /// Makes the next request of a kind take effect, then lose its response.
    package func loseNextResponse(to kind: CloudRequestKind) {
        state.withLock { $0.faults.lostResponsesByKind[kind, default: 0] += 1 }
    }

    /// Resets the counters.
    package func resetStatistics() {
        state.withLock { $0.statistics = CloudRequestStatistics() }
    }
}
