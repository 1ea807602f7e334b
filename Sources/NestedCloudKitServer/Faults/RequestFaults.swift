import NestedCloudKitCodable

/// The faults a test asked a database to inject (the simulated server, or any behind a `FaultInjectingDatabase`),
/// and the rules for when each one applies: a request that fails by number or by kind, a record that fails inside
/// its request, and a response lost after the request took effect.
package struct RequestFaults: Sendable {
    /// Failures of requests by number (from 1, in the order requests arrive).
    package var byNumber: [Int: CloudDatabaseError] = [:]
    /// Failures of the next requests of a kind, in order.
    package var byKind: [CloudRequestKind: [CloudDatabaseError]] = [:]
    /// Failures of one record, the next time a request fetches, saves or deletes it.
    package var byRecord: [CloudRecord.ID: CloudDatabaseError] = [:]
    /// The requests, by number, whose responses are lost after they take effect.
    package var lostResponses: Set<Int> = []
    /// How many of the next requests of a kind that take effect lose their responses.
    package var lostResponsesByKind: [CloudRequestKind: Int] = [:]

    /// The failure of request `number` of a kind, if a test asked for one. A request that fails doesn't take effect,
    /// so a lost response aimed at it goes too.
    package mutating func failure(ofRequest number: Int, kind: CloudRequestKind) -> CloudDatabaseError? {
        guard let fault = byNumber.removeValue(forKey: number) ?? takeFailure(of: kind) else { return nil }
        lostResponses.remove(number)
        return fault
    }

    /// Notes that request `number` takes effect: a response lost for its kind is aimed at the first request of the
    /// kind that does, so one refused earlier doesn't use it up.
    package mutating func requestTakesEffect(_ number: Int, kind: CloudRequestKind) {
        if let count = lostResponsesByKind[kind], count > 0 {
            lostResponsesByKind[kind] = count - 1
            lostResponses.insert(number)
        }
    }

    /// Notes that request `number` was refused before it took effect.
    package mutating func requestRefused(_ number: Int) {
        lostResponses.remove(number)
    }

    /// Whether the response to request `number` is lost; asked once, when the request answers.
    package mutating func takeLostResponse(_ number: Int) -> Bool {
        lostResponses.remove(number) != nil
    }

    /// The failure of one record, if a test asked for one; it applies once.
    package mutating func takeFailure(of id: CloudRecord.ID) -> CloudDatabaseError? {
        byRecord.removeValue(forKey: id)
    }

    private mutating func takeFailure(of kind: CloudRequestKind) -> CloudDatabaseError? {
        guard var waiting = byKind[kind], !waiting.isEmpty else { return nil }
        let fault = waiting.removeFirst()
        byKind[kind] = waiting
        return fault
    }
}
