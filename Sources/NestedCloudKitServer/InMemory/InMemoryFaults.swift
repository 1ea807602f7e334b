import NestedCloudKitCodable

/// The faults a test asked ``InMemoryCloudDatabase`` to inject, and the rules for when each one applies: a request
/// that fails by number or by kind, a record that fails inside its request, and a response lost after the request
/// took effect.
struct InMemoryFaults: Sendable {
    /// Failures of requests by number (from 1, in the order requests arrive).
    var byNumber: [Int: CloudDatabaseError] = [:]
    /// Failures of the next requests of a kind, in order.
    var byKind: [InMemoryCloudDatabase.RequestKind: [CloudDatabaseError]] = [:]
    /// Failures of one record, the next time a request fetches, saves or deletes it.
    var byRecord: [CloudRecord.ID: CloudDatabaseError] = [:]
    /// The requests, by number, whose responses are lost after they take effect.
    var lostResponses: Set<Int> = []
    /// How many of the next requests of a kind that take effect lose their responses.
    var lostResponsesByKind: [InMemoryCloudDatabase.RequestKind: Int] = [:]

    /// The failure of request `number` of a kind, if a test asked for one. A request that fails doesn't take effect,
    /// so a lost response aimed at it goes too.
    mutating func failure(ofRequest number: Int, kind: InMemoryCloudDatabase.RequestKind) -> CloudDatabaseError? {
        guard let fault = byNumber.removeValue(forKey: number) ?? takeFailure(of: kind) else { return nil }
        lostResponses.remove(number)
        return fault
    }

    /// Notes that request `number` takes effect: a response lost for its kind is aimed at the first request of the
    /// kind that does, so one refused earlier doesn't use it up.
    mutating func requestTakesEffect(_ number: Int, kind: InMemoryCloudDatabase.RequestKind) {
        if let count = lostResponsesByKind[kind], count > 0 {
            lostResponsesByKind[kind] = count - 1
            lostResponses.insert(number)
        }
    }

    /// Notes that request `number` was refused before it took effect.
    mutating func requestRefused(_ number: Int) {
        lostResponses.remove(number)
    }

    /// Whether the response to request `number` is lost; asked once, when the request answers.
    mutating func takeLostResponse(_ number: Int) -> Bool {
        lostResponses.remove(number) != nil
    }

    /// The failure of one record, if a test asked for one; it applies once.
    mutating func takeFailure(of id: CloudRecord.ID) -> CloudDatabaseError? {
        byRecord.removeValue(forKey: id)
    }

    private mutating func takeFailure(of kind: InMemoryCloudDatabase.RequestKind) -> CloudDatabaseError? {
        guard var waiting = byKind[kind], !waiting.isEmpty else { return nil }
        let fault = waiting.removeFirst()
        byKind[kind] = waiting
        return fault
    }
}
