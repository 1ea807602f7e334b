import Foundation
import NestedCloudKitCodable

/// What every request to a test's database passes through, written once for the simulated server and for
/// ``FaultInjectingDatabase``: it is numbered and counted, refused when a test asked for a fault or it holds more
/// than the limit, and its response lost when a test asked for that.
package struct RequestGate: Sendable {
    /// What the database has been asked.
    package var statistics = CloudRequestStatistics()
    /// The faults a test asked for.
    package var faults = RequestFaults()

    package init() {}

    /// Counts a request as it arrives; returns its number, from 1.
    package mutating func arrive(_ kind: CloudRequestKind) -> Int {
        statistics.requests += 1
        statistics[keyPath: kind.counter] += 1
        return statistics.requests
    }

    /// Lets an arrived request take effect, or fails it: with the fault a test asked for, or for holding more items
    /// than `maximum`.
    package mutating func admit(_ number: Int, _ kind: CloudRequestKind, items: Int, maximum: Int) throws {
        if let fault = faults.failure(ofRequest: number, kind: kind) { throw fault }
        guard items <= maximum else {
            faults.requestRefused(number)
            throw CloudDatabaseError.limitExceeded(limit: maximum, requested: items)
        }
        faults.requestTakesEffect(number, kind: kind)
    }

    /// The response to a request, unless a test asked for it to be lost after the request took effect.
    package mutating func respond<Response>(to number: Int, with response: Response) throws -> Response {
        if faults.takeLostResponse(number) { throw CloudDatabaseError.serverResponseLost }
        return response
    }

    // MARK: What a test asks for

    /// Makes the request with the given number fail with `error`.
    package mutating func failRequest(number: Int, with error: CloudDatabaseError) {
        faults.byNumber[number] = error
    }

    /// Makes the next request fail with `error`.
    package mutating func failNextRequest(with error: CloudDatabaseError) {
        faults.byNumber[statistics.requests + 1] = error
    }

    /// Makes the next request of a kind fail with `error`, whatever requests come before it.
    package mutating func failNextRequest(to kind: CloudRequestKind, with error: CloudDatabaseError) {
        faults.byKind[kind, default: []].append(error)
    }

    /// Makes a record fail with `error` the next time a request fetches, saves or deletes it.
    package mutating func failRecord(_ id: CloudRecord.ID, with error: CloudDatabaseError) {
        faults.byRecord[id] = error
    }

    /// Makes the next request take effect, then lose its response.
    package mutating func loseNextResponse() {
        faults.lostResponses.insert(statistics.requests + 1)
    }

    /// Makes the next request of a kind take effect, then lose its response.
    package mutating func loseNextResponse(to kind: CloudRequestKind) {
        faults.lostResponsesByKind[kind, default: 0] += 1
    }
}
