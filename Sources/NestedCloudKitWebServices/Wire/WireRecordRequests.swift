import Foundation

/// `records/modify`: operations on the records of one zone.
struct WireModifyRequest: Codable, Hashable, Sendable {
    var operations: [WireRecordOperation]
    var zoneID: WireZoneID
    /// All or nothing; the server applies it in custom zones only.
    var atomic: Bool
    var desiredKeys: [String]?
}

/// One operation of `records/modify`.
struct WireRecordOperation: Codable, Hashable, Sendable {
    var operationType: WireOperationType
    var record: WireRecord
    var desiredKeys: [String]?
}

/// The seven operation types of `records/modify`.
enum WireOperationType: String, Codable, Hashable, Sendable, CaseIterable {
    /// Create a record; fails if it exists.
    case create
    /// Change the given fields of a record, if its change tag is the server's.
    case update
    /// Change the given fields of a record whatever its version, creating it if it doesn't exist.
    case forceUpdate
    /// Replace a record's fields with the given ones (the others are cleared), if its change tag is the server's.
    case replace
    /// Replace a record's fields whatever its version, creating it if it doesn't exist.
    case forceReplace
    /// Delete a record.
    case delete
    /// Delete a record whatever its version.
    case forceDelete
}

/// `records/modify`, `records/lookup` and `records/query` responses: records, or error dictionaries in their place.
struct WireRecordsResponse: Decodable, Sendable {
    var records: [WireItemResult<WireRecord>]
    /// Where a query's results continue.
    var continuationMarker: String?
}

/// `records/lookup`: records of one zone by name.
struct WireLookupRequest: Codable, Hashable, Sendable {
    struct RecordName: Codable, Hashable, Sendable {
        var recordName: String
    }

    var records: [RecordName]
    var zoneID: WireZoneID
    var desiredKeys: [String]?
}

/// `records/query`: the records of one zone that match a query.
struct WireQueryRequest: Codable, Hashable, Sendable {
    var zoneID: WireZoneID
    var resultsLimit: Int?
    var query: WireQuery
    var continuationMarker: String?
    var desiredKeys: [String]?
}

/// A query dictionary: `{recordType, filterBy, sortBy}`; the filters all hold.
struct WireQuery: Codable, Hashable, Sendable {
    struct Filter: Codable, Hashable, Sendable {
        var comparator: String
        var fieldName: String
        var fieldValue: WireField
        /// `NEAR`'s radius in metres.
        var distance: Double?
    }

    struct Sort: Codable, Hashable, Sendable {
        var fieldName: String
        var ascending: Bool
    }

    var recordType: String
    var filterBy: [Filter]?
    var sortBy: [Sort]?
}
