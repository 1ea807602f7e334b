import Foundation
import NestedCloudKitCodable

/// `changes/zone`, `records/changes` and `changes/database`: what changed since a sync token.
enum ChangesEndpoint {
    /// `changes/zone`: each zone's changes since its own token.
    static func zones(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        try context.requireChangeTracking("changes/zone")
        guard let zones = context.body["zones"]?.array, !zones.isEmpty else {
            throw .badRequest("changes/zone needs zones")
        }
        var results: [JSONValue] = []
        for zone in zones {
            let zoneID = try context.coding.zoneID(zone["zoneID"])
            do throws(ServerError) {
                results.append(
                    try await changes(
                        in: zoneID, token: zone["syncToken"] ?? context.body["syncToken"],
                        limit: zone["resultsLimit"] ?? context.body["resultsLimit"],
                        desiredKeys: zone["desiredKeys"] ?? context.body["desiredKeys"],
                        recordTypes: zone["desiredRecordTypes"] ?? context.body["desiredRecordTypes"], context: context)
                )
            } catch {
                results.append(error.item(["zoneID": context.coding.json(zoneID)]))
            }
        }
        return ["zones": .array(results)]
    }

    /// `records/changes`: one custom zone's changes, the older form of `changes/zone`.
    static func records(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        try context.requireChangeTracking("records/changes")
        let zoneID = try context.coding.zoneID(context.body["zoneID"])
        guard zoneID != .default else {
            throw .badRequest("records/changes serves custom zones only: the default zone tracks no changes")
        }
        guard
            case .object(var members) = try await changes(
                in: zoneID, token: context.body["syncToken"], limit: context.body["resultsLimit"],
                desiredKeys: context.body["desiredKeys"], recordTypes: context.body["desiredRecordTypes"],
                context: context)
        else { return [:] }
        members["zoneID"] = nil
        return .object(members)
    }

    private static func changes(
        in zoneID: CloudRecord.ZoneID, token: JSONValue?, limit: JSONValue?, desiredKeys: JSONValue?,
        recordTypes: JSONValue?, context: DatabaseRequest
    ) async throws(ServerError) -> JSONValue {
        let resultsLimit = try context.resultsLimit(limit, default: DatabaseRequest.maximumItems)
        let since = try changeToken(token)
        let changes = try await RecordsEndpoint.call {
            try await context.database.recordZoneChanges(
                inZoneWith: zoneID, since: since, desiredKeys: nil, resultsLimit: resultsLimit)
        }
        let types: Set<String>? = recordTypes?.array.map { Set($0.compactMap(\.string)) }
        let keys = context.desiredKeys(desiredKeys)
        let modified = await context.coding.outgoing(
            changes.modifications.filter { types?.contains($0.recordType) ?? true }, desiredKeys: keys)
        var records: [JSONValue] = modified.map(context.coding.json)
        records += changes.deletions.filter { types?.contains($0.recordType) ?? true }.map {
            [
                "recordName": .string($0.id.recordName), "recordType": .string($0.recordType), "deleted": true,
                "zoneID": context.coding.json($0.id.zoneID),
            ]
        }
        return [
            "zoneID": context.coding.json(zoneID), "syncToken": .string(changes.changeToken.data.base64EncodedString()),
            "moreComing": .bool(changes.moreComing), "records": .array(records),
        ]
    }

    /// `changes/database`: the zones changed and deleted since the database's token.
    static func database(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        try context.requireChangeTracking("changes/database")
        let changes = try await databaseChanges(context, token: context.body["syncToken"])
        return ["zones": changes.zones, "syncToken": changes.token, "moreComing": .bool(changes.moreComing)]
    }

    /// The zones changed since `token`; a deleted zone carries `deleted`, `purged` or `encryptedDataReset`, the
    /// flags FIDELITY.md explains.
    static func databaseChanges(_ context: DatabaseRequest, token: JSONValue?) async throws(ServerError)
        -> (zones: JSONValue, token: JSONValue, moreComing: Bool)
    {
        let limit = try context.resultsLimit(context.body["resultsLimit"], default: DatabaseRequest.maximumItems)
        let since = try changeToken(token)
        let changes = try await RecordsEndpoint.call {
            try await context.database.databaseChanges(since: since, resultsLimit: limit)
        }
        let deleted: [JSONValue] = changes.deletions.map { deletion in
            let flag =
                switch deletion.reason {
                case .deleted: "deleted"
                case .purged: "purged"
                case .encryptedDataReset: "encryptedDataReset"
                }
            return .object(["zoneID": context.coding.json(deletion.zoneID), flag: true])
        }
        let zones = changes.modifiedZoneIDs.map { JSONValue.object(["zoneID": context.coding.json($0)]) } + deleted
        return (.array(zones), .string(changes.changeToken.data.base64EncodedString()), changes.moreComing)
    }

    /// A sync token from the wire: the database's own token in base64.
    static func changeToken(_ value: JSONValue?) throws(ServerError) -> CloudChangeToken? {
        guard let value, !value.isNull else { return nil }
        guard let text = value.string, let data = Data(base64Encoded: text) else {
            throw .badRequest("the syncToken isn't one this emulator gave: fetch again without one")
        }
        return CloudChangeToken(data: data)
    }
}
