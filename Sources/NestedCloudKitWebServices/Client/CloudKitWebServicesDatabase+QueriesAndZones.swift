import AsyncHTTPClient
import Foundation
import Logging
import NestedCloudKitCodable

// Queries and zones, as Web Services' records/query and zones/modify and zones/list answer them.

extension CloudKitWebServicesDatabase {
    // MARK: Querying

    /// Finds records with `records/query`: the predicate as `EQUALS` filters, the sort descriptors as `sortBy`,
    /// and a page of at most 200 (`CloudQuery.maximumResults` asks for 200).
    public func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await runQuery(
            query, in: zoneID, continuationMarker: nil, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
    }

    /// Continues a query from the continuation marker a page returned.
    public func records(
        continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage {
        try await runQuery(
            cursor.query, in: cursor.zoneID, continuationMarker: cursor.position, desiredKeys: desiredKeys,
            resultsLimit: resultsLimit
        )
    }

    private func runQuery(
        _ query: CloudQuery, in zone: CloudRecord.ZoneID, continuationMarker: String?, desiredKeys: [String]?,
        resultsLimit: Int
    ) async throws -> CloudQueryPage {
        // CloudKit Web Services takes 1 to 200; `maximumResults` (0) asks for as many as it gives.
        let limit =
            resultsLimit <= 0 ? Self.maximumOperationsPerRequest : min(resultsLimit, Self.maximumOperationsPerRequest)
        let request = WireQueryRequest(
            zoneID: WireZoneID(zone), resultsLimit: limit, query: try WireQuery(query, in: zone),
            continuationMarker: continuationMarker, desiredKeys: desiredKeys
        )
        let response = try await transport.post("records/query", request, as: WireRecordsResponse.self)
        let owners = ZoneOwners(requested: zone, answers: response.records.map { $0.item?.zoneID })
        var matches: [(CloudRecord.ID, Result<CloudRecord, CloudDatabaseError>)] = []
        for item in response.records {
            if let record = item.item {
                let converted = record.cloudRecord(in: zone, owners: owners)
                matches.append((converted.id, await withLocalAssets(converted)))
            } else if let error = item.error, let name = error.recordName {
                let id = CloudRecord.ID(recordName: name, zoneID: zone)
                matches.append((id, .failure(error.databaseError(recordID: id, zoneID: zone))))
            }
        }
        let cursor = response.continuationMarker.map { CloudQuery.Cursor(query: query, zoneID: zone, position: $0) }
        return (matches, cursor)
    }

    // MARK: Zones

    /// Creates and deletes zones with `zones/modify`. The default zone, and any zone of the public database, are
    /// refused without a request: CloudKit allows neither.
    public func modifyRecordZones(
        saving zonesToSave: [CloudRecord.ZoneID], deleting zonesToDelete: [CloudRecord.ZoneID]
    ) async throws -> CloudZoneModifyResults {
        try checkLimit(zonesToSave.count + zonesToDelete.count)
        var saveResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        var deleteResults: [CloudRecord.ZoneID: Result<Void, CloudDatabaseError>] = [:]
        var operations: [WireZonesModifyRequest.Operation] = []
        for zone in zonesToSave {
            if let refusal = zoneRefusal(zone) ?? CloudRequestRules.refusal(creating: zone) {
                saveResults[zone] = .failure(refusal)
            } else {
                operations.append(.init(operationType: .create, zone: WireZone(zoneID: WireZoneID(zone))))
            }
        }
        for zone in zonesToDelete {
            if let refusal = zoneRefusal(zone) {
                deleteResults[zone] = .failure(refusal)
            } else {
                operations.append(.init(operationType: .delete, zone: WireZone(zoneID: WireZoneID(zone))))
            }
        }
        guard !operations.isEmpty else { return (saveResults, deleteResults) }
        let response = try await transport.post(
            "zones/modify", WireZonesModifyRequest(operations: operations), as: WireZonesResponse.self)
        for (index, item) in response.zones.enumerated() {
            guard let operation = operations[safe: index] else { break }
            let zone =
                zonesToSave.first {
                    WireZoneID($0).zoneName == operation.zone.zoneID.zoneName && operation.operationType == .create
                }
                ?? zonesToDelete.first { WireZoneID($0).zoneName == operation.zone.zoneID.zoneName }
            guard let zone else { continue }
            let result: Result<Void, CloudDatabaseError> =
                if let error = item.error {
                    .failure(error.databaseError(recordID: nil, zoneID: zone))
                } else {
                    .success(())
                }
            if operation.operationType == .create { saveResults[zone] = result } else { deleteResults[zone] = result }
        }
        return (saveResults, deleteResults)
    }

    /// Why CloudKit refuses to create or delete the zone whatever it holds: the default zone is permanent, and the
    /// public database has no other.
    private func zoneRefusal(_ zone: CloudRecord.ZoneID) -> CloudDatabaseError? {
        if zone.zoneName == CloudRecord.ZoneID.defaultZoneName {
            return .invalidArguments("the default zone can't be created or deleted")
        }
        if configuration.database == .public {
            return .invalidArguments(
                "the public database has only the default zone; custom zones live in the private database")
        }
        return nil
    }

    /// The database's zones, from `zones/list`, the current user's with CloudKit's `__defaultOwner__` as owner.
    public func allRecordZones() async throws -> [CloudRecord.ZoneID] {
        let response = try await transport.get("zones/list", as: WireZonesResponse.self)
        let owners = ZoneOwners(requested: .default, answers: response.zones.map { $0.item?.zoneID })
        return response.zones.compactMap { $0.item.map { owners.zoneID($0.zoneID, default: .default) } }
    }
}
