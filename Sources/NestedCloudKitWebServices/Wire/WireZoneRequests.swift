import Foundation

/// A zone dictionary, as `zones/list` and `zones/modify` return it.
struct WireZone: Codable, Hashable, Sendable {
    var zoneID: WireZoneID
    var syncToken: String?
    var atomic: Bool?
}

/// `zones/list`'s response, and `zones/modify`'s: zones, or error dictionaries in their place.
struct WireZonesResponse: Decodable, Sendable {
    var zones: [WireItemResult<WireZone>]
}

/// `zones/modify`: create and delete zones.
struct WireZonesModifyRequest: Codable, Hashable, Sendable {
    struct Operation: Codable, Hashable, Sendable {
        var operationType: OperationType
        var zone: WireZone
    }

    enum OperationType: String, Codable, Hashable, Sendable {
        case create, delete
    }

    var operations: [Operation]
}
