import Foundation
import NestedCloudKitCodable

/// `zones/list`, `zones/lookup`, `zones/modify` and `zones/changes`.
enum ZonesEndpoint {
    /// `zones/list`: every zone "and their sync tokens", as the reference says. A custom zone's `syncToken` is its
    /// state now, what `changes/zone` would end with, so that a client can start tracking it from here; the default
    /// zone keeps no change history and has none. `atomic` says whether the zone takes atomic requests.
    static func list(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        let zones = try await RecordsEndpoint.call { try await context.database.allRecordZones() }
        var items: [JSONValue] = []
        for zone in zones {
            var item: [String: JSONValue] = ["zoneID": context.coding.json(zone), "atomic": .bool(zone != .default)]
            if zone != .default, let token = try await currentSyncToken(of: zone, context: context) {
                item["syncToken"] = .string(token.data.base64EncodedString())
            }
            items.append(.object(item))
        }
        return ["zones": .array(items)]
    }

    /// The token of a zone's latest change. The portable database gives a zone's token only at the end of its
    /// changes, so they are read to the end, system fields only, in the largest pages it serves. A zone that went
    /// away meanwhile has none.
    private static func currentSyncToken(of zone: CloudRecord.ZoneID, context: DatabaseRequest)
        async throws(ServerError) -> CloudChangeToken?
    {
        var token: CloudChangeToken?
        while true {
            let since = token
            let changes: CloudRecordZoneChanges
            do {
                changes = try await context.database.recordZoneChanges(
                    inZoneWith: zone, since: since, desiredKeys: [], resultsLimit: nil)
            } catch let error as CloudDatabaseError {
                switch error.kind {
                case .zoneNotFound, .userDeletedZone, .encryptedDataReset: return nil
                default: throw ServerError(error)
                }
            } catch {
                throw ServerError(.internalError, FilePaths.removed(from: "\(error)"))
            }
            token = changes.changeToken
            if !changes.moreComing { return token }
        }
    }

    static func lookUp(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        guard let wanted = context.body["zones"]?.array else { throw .badRequest("zones/lookup needs zones") }
        let existing = Set(try await RecordsEndpoint.call { try await context.database.allRecordZones() })
        var items: [JSONValue] = []
        for item in wanted {
            let zone = try context.coding.zoneID(item["zoneID"] ?? item)
            items.append(
                existing.contains(zone)
                    ? ["zoneID": context.coding.json(zone)]
                    : ServerError(.zoneNotFound, "zone \(zone.zoneName) doesn't exist")
                        .item(["zoneID": context.coding.json(zone)]))
        }
        return ["zones": .array(items)]
    }

    static func modify(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        guard context.key.scope == .private else {
            throw .badRequest(
                "zones/modify serves the private database: the \(context.key.scope.rawValue) database has no zones of its own"
            )
        }
        guard let operations = context.body["operations"]?.array, !operations.isEmpty else {
            throw .badRequest("zones/modify needs operations")
        }
        guard operations.count <= DatabaseRequest.maximumItems else {
            throw .badRequest("zones/modify takes at most \(DatabaseRequest.maximumItems) operations")
        }
        var saves: [CloudRecord.ZoneID] = []
        var deletes: [CloudRecord.ZoneID] = []
        var order: [(CloudRecord.ZoneID, Bool)] = []
        for operation in operations {
            let zone = try context.coding.zoneID(operation["zone"]?["zoneID"])
            guard zone != .default else { throw .badRequest("the default zone can't be created or deleted") }
            switch operation["operationType"]?.string {
            case "create": saves.append(zone)
            case "delete": deletes.append(zone)
            case let other: throw .badRequest("unknown zone operationType \(other ?? "none"): create or delete")
            }
            order.append((zone, operation["operationType"]?.string == "create"))
        }
        let (zonesToSave, zonesToDelete) = (saves, deletes)
        let results = try await context.handle.exclusively { () async throws(ServerError) -> CloudZoneModifyResults in
            try await RecordsEndpoint.call {
                try await context.database.modifyRecordZones(saving: zonesToSave, deleting: zonesToDelete)
            }
        }
        context.handle.noteWrite()
        let deleted = order.filter { !$0.1 }.map(\.0).filter {
            if case .success? = results.deleteResults[$0] { true } else { false }
        }
        if !deleted.isEmpty || !saves.isEmpty {
            await context.state.notifications.zonesChanged(in: context.handle)
            await context.state.notifyDatabasesChangedByOthers(after: context.handle)
        }
        return [
            "zones": .array(
                order.map { zone, isCreate in
                    switch isCreate
                        ? results.saveResults[zone].map({ $0.map { _ in () } }) : results.deleteResults[zone]
                    {
                    case .success?: return ["zoneID": context.coding.json(zone)]
                    case .failure(let error)?: return ServerError(error).item(["zoneID": context.coding.json(zone)])
                    case nil:
                        return ServerError(.internalError, "no result").item(["zoneID": context.coding.json(zone)])
                    }
                })
        ]
    }

    /// `zones/changes`: the zones changed since `metaSyncToken` (the database's change token under its own name).
    static func changes(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        try context.requireChangeTracking("zones/changes")
        let changes = try await ChangesEndpoint.databaseChanges(
            context, token: context.body["metaSyncToken"] ?? context.body["syncToken"])
        return [
            "zones": changes.zones, "metaSyncToken": changes.token, "syncToken": changes.token,
            "moreComing": .bool(changes.moreComing),
        ]
    }
}
