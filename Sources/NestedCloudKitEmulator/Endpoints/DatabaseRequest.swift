import Foundation
import NestedCloudKitCodable
import NestedCloudKitRules
import NestedCloudKitServer

/// A request to one database's endpoint, authenticated, with everything its handler needs.
struct DatabaseRequest: Sendable {
    let request: EmulatorRequest
    let body: JSONValue
    let handle: DatabaseHandle
    let caller: Caller
    let coding: WireCoding
    let state: EmulatorState

    var key: DatabaseKey { handle.key }
    var database: any CloudRecordStoringDatabase { handle.database }

    /// The most operations or results one request may hold, as the reference's property metrics say.
    static let maximumItems = 200

    /// The request's `resultsLimit`, checked against the documented range.
    func resultsLimit(_ value: JSONValue?, default fallback: Int) throws(ServerError) -> Int {
        guard let value, !value.isNull else { return fallback }
        guard let limit = value.int, (1...Self.maximumItems).contains(limit) else {
            throw .badRequest("resultsLimit must be 1 to \(Self.maximumItems), got \(value)")
        }
        return limit
    }

    func desiredKeys(_ value: JSONValue?) -> [String]? {
        value?.array?.compactMap(\.string)
    }

    /// Refuses a change-tracking endpoint in the public database, which has no custom zones to track.
    func requireChangeTracking(_ endpoint: String) throws(ServerError) {
        if key.scope == .public {
            throw .badRequest(
                "\(endpoint) serves the private and shared databases only: the public database tracks no changes")
        }
    }
}
