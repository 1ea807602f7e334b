import Foundation

// Change tracking reads `changes/zone` and `changes/database` (CloudKit Web Services Reference, "Fetching Record
// Zone Changes" and "Fetching Database Changes"). `changes/zone` is used rather than the older single-zone
// `records/changes`: both are documented with the same `syncToken`, `moreComing` and records, but `changes/zone`
// is the one documented next to `changes/database` (the pair `CKFetchDatabaseChangesOperation` and
// `CKFetchRecordZoneChangesOperation` make in the framework), and the one CloudKit JS's `fetchRecordZoneChanges`
// describes (`CloudKit.RecordZoneChanges`: `zoneID`, `syncToken`, `moreComing`, `records`).

/// `changes/zone`: what changed in some zones since their sync tokens. The client asks for one zone a request.
struct WireZoneChangesRequest: Codable, Hashable, Sendable {
    /// One zone to read, with its own token, keys and limit (documented to override the request's).
    struct Zone: Codable, Hashable, Sendable {
        var zoneID: WireZoneID
        var syncToken: String?
        /// `[]` asks for no fields: the records' system fields only.
        var desiredKeys: [String]?
        var resultsLimit: Int?
    }

    var zones: [Zone]
}

/// The `changes/zone` response: a result for each zone asked, or an error dictionary in its place.
struct WireZoneChangesResponse: Decodable, Sendable {
    /// One zone's page of changes: changed records, deleted ones as tombstones (`deleted: true`), the token to
    /// ask from next time, and whether more changes wait.
    struct Zone: Codable, Sendable {
        var zoneID: WireZoneID?
        var syncToken: String?
        var moreComing: Bool?
        var records: [WireItemResult<WireRecord>]?
    }

    var zones: [WireItemResult<Zone>]
}

/// `changes/database`: the zones that changed since a sync token.
struct WireDatabaseChangesRequest: Codable, Hashable, Sendable {
    var syncToken: String?
    var resultsLimit: Int?
}

/// The `changes/database` response: a zone dictionary for each changed zone (or an error dictionary in its
/// place), the token to ask from next time, and whether more changes wait.
struct WireDatabaseChangesResponse: Decodable, Sendable {
    var zones: [WireItemResult<WireChangedZone>]
    var syncToken: String?
    var moreComing: Bool?
}

/// A zone of `changes/database`'s response.
///
/// The reference documents a zone dictionary (`zoneID`, `syncToken`, `atomic`) and says nothing of deleted zones.
/// How a deletion is flagged is inferred: `deleted: true` as for a deleted record, `purged: true` for a zone the
/// user deleted from iCloud settings (`CKDatabase.DatabaseChange.Deletion.purged`), and
/// `encryptedDataReset: true` for a zone deleted by a reset of the user's encryption keys.
struct WireChangedZone: Codable, Hashable, Sendable {
    var zoneID: WireZoneID
    var syncToken: String?
    var deleted: Bool?
    var purged: Bool?
    var encryptedDataReset: Bool?
}
