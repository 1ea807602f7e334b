import Foundation
import GRDB
import NestedCloudKitCodable

/// A ``SyncStore`` as a `CloudDatabase`: records by ID and queries answer from the local store, offline, so
/// `CKRecordDecoder` decodes models from it; saves and deletes are the app's own changes, queued for upload.
///
/// Change tracking and subscriptions belong to the server: those calls throw `CloudDatabaseError/invalidArguments(_:)`.
public struct LocalCloudDatabase: CloudDatabase {
    /// The store it reads.
    public let store: SyncStore

    /// A local read has no per-request limit; this only sizes the decoder's batches.
    public var maximumItemsPerRequest: Int { 10_000 }

    /// The records with these IDs in the store, each as a result; a missing one is `unknownItem`.
    public func records(for ids: [CloudRecord.ID], desiredKeys: [String]?) async throws -> CloudRecordResults {
        let found = try await store.read { db in try StoreTables.records(ids, in: db) }
        var results: CloudRecordResults = [:]
        for record in found { results[record.id] = .success(record.keepingFields(desiredKeys)) }
        for id in ids where results[id] == nil { results[id] = .failure(.unknownItem(id)) }
        return results
    }

    /// Saves and deletes records as the app's own changes, queued for upload; the store's copies are returned.
    public func modifyRecords(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy, atomically: Bool
    ) async throws -> CloudModifyResults {
        try await store.save(recordsToSave)
        try await store.deleteRecords(withIDs: recordIDsToDelete)
        var saved: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
        for record in recordsToSave {
            saved[record.id] =
                try await store.record(withID: record.id).map { .success($0) }
                ?? .failure(.unknownItem(record.id))
        }
        return (
            saved, Dictionary(recordIDsToDelete.map { ($0, .success(())) }, uniquingKeysWith: { first, _ in first })
        )
    }

    /// The store's records of the query's type that match it, sorted, a page at a time.
    public func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await page(of: query, in: zoneID, from: 0, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    /// The next page of a query from a cursor this store made.
    public func records(
        continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        guard let offset = Int(cursor.position), offset >= 0 else {
            throw CloudDatabaseError.invalidArguments("the cursor wasn't made by this store")
        }
        return try await page(
            of: cursor.query, in: cursor.zoneID, from: offset, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    private func page(
        of query: CloudQuery, in zoneID: CloudRecord.ZoneID, from offset: Int, desiredKeys: [String]?,
        resultsLimit: Int
    ) async throws -> CloudQueryPage {
        var matches = try await store.records(ofType: query.recordType, in: zoneID).filter {
            query.predicate.matches($0)
        }
        if !query.sortDescriptors.isEmpty { matches.sort { query.sortsBefore($0, $1) } }
        let limit = resultsLimit > 0 ? resultsLimit : matches.count
        let end = min(matches.count, offset + limit)
        let page = offset < end ? Array(matches[offset..<end]) : []
        let cursor =
            end < matches.count ? CloudQuery.Cursor(query: query, zoneID: zoneID, position: String(end)) : nil
        return (page.map { ($0.id, .success($0.keepingFields(desiredKeys))) }, cursor)
    }

    /// Refused: the synced zones are named in the engine's configuration.
    public func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults {
        throw CloudDatabaseError.invalidArguments(
            "the local store's zones are the synced zones: name them in the SyncEngine's configuration")
    }

    /// The zones the store has records in.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        try await store.read { db in
            try Row.fetchAll(db, sql: "SELECT DISTINCT zone_owner, zone_name FROM ncs_record ORDER BY 2, 1").map {
                CloudRecord.ZoneID(zoneName: $0["zone_name"], ownerName: $0["zone_owner"])
            }
        }
    }

    /// Refused: change tracking is the server's.
    public func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges {
        throw Self.serverOnly("changes since a token")
    }

    /// Refused: change tracking is the server's.
    public func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws
        -> CloudDatabaseChanges
    {
        throw Self.serverOnly("changes since a token")
    }

    /// The user the store's data belongs to; `notAuthenticated` before the first sync.
    public func userRecordName() async throws -> String {
        guard let name = try await store.syncedUserRecordName() else { throw CloudDatabaseError.notAuthenticated }
        return name
    }

    /// `.available` once the store has synced for a user, else `.couldNotDetermine`.
    public func accountStatus() async throws -> CloudAccountStatus {
        try await store.syncedUserRecordName() == nil ? .couldNotDetermine : .available
    }

    /// Refused: subscriptions are the server's.
    public func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults {
        throw Self.serverOnly("subscriptions")
    }

    /// Refused: subscriptions are the server's.
    public func allSubscriptions() async throws -> [CloudSubscription] {
        throw Self.serverOnly("subscriptions")
    }

    private static func serverOnly(_ feature: String) -> CloudDatabaseError {
        .invalidArguments(
            "the local store has no \(feature): ask the server's database, which the SyncEngine syncs with")
    }
}
