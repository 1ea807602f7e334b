import Foundation
import NestedCloudKitCodable

/// `subscriptions/list`, `subscriptions/lookup` and `subscriptions/modify`: zone, query and database
/// subscriptions, whose pushes go to the notification URLs of the user who saved them.
enum SubscriptionsEndpoint {
    static func list(_ context: DatabaseRequest) async -> JSONValue {
        ["subscriptions": .array(await context.handle.subscriptions.all.map(\.entry.subscription))]
    }

    static func lookUp(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        guard let wanted = context.body["subscriptions"]?.array else {
            throw .badRequest("subscriptions/lookup needs subscriptions")
        }
        var items: [JSONValue] = []
        for item in wanted {
            let id = item["subscriptionID"]?.string ?? ""
            if let entry = await context.handle.subscriptions.entry(id) {
                items.append(entry.subscription)
            } else {
                items.append(ServerError(.notFound, "no subscription \(id)").item(["subscriptionID": .string(id)]))
            }
        }
        return ["subscriptions": .array(items)]
    }

    static func modify(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        guard let user = context.caller.userName else {
            throw context.state.authenticationRequired(
                context.request, reason: "subscriptions belong to a signed-in user")
        }
        guard let operations = context.body["operations"]?.array, !operations.isEmpty else {
            throw .badRequest("subscriptions/modify needs operations")
        }
        var items: [JSONValue] = []
        for operation in operations {
            let wire = operation["subscription"] ?? .null
            let id = wire["subscriptionID"]?.string ?? ""
            let identifying: [String: JSONValue] = ["subscriptionID": .string(id)]
            let store = context.handle.subscriptions
            do throws(ServerError) {
                guard !id.isEmpty else { throw .badRequest("a subscription needs a subscriptionID") }
                let existing = await store.entry(id)
                switch operation["operationType"]?.string {
                case "create", "update":
                    if operation["operationType"]?.string == "create", existing != nil {
                        throw ServerError(.exists, "subscription \(id) exists: update it, or delete it first")
                    }
                    if operation["operationType"]?.string == "update", existing == nil {
                        throw ServerError(.notFound, "no subscription \(id) to update")
                    }
                    let normalized = try await normalize(wire, context: context)
                    do {
                        try await store.save(.init(subscription: normalized, owner: user), id: id)
                    } catch {
                        throw error.serverError(id: id)
                    }
                    items.append(normalized)
                case "delete":
                    guard existing != nil else { throw ServerError(.notFound, "no subscription \(id)") }
                    do {
                        try await store.delete(id)
                    } catch {
                        throw ServerError(
                            .internalError, "couldn't delete subscription \(id): \(FilePaths.removed(from: "\(error)"))"
                        )
                    }
                    items.append(.object(identifying))
                case let other:
                    throw .badRequest("unknown subscription operationType \(other ?? "none"): create, update or delete")
                }
            } catch {
                items.append(error.item(identifying))
            }
        }
        return ["subscriptions": .array(items)]
    }

    /// The subscription as it will be stored and listed: checked, with its zone named as the wire names it.
    private static func normalize(_ wire: JSONValue, context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        guard case .object(var members) = wire else { throw .badRequest("a subscription must be an object") }
        switch wire["subscriptionType"]?.string {
        case "zone":
            let zone = try context.coding.zoneID(wire["zoneID"])
            let zones = try await RecordsEndpoint.call { try await context.database.allRecordZones() }
            guard zones.contains(zone) else {
                throw ServerError(
                    .zoneNotFound, "zone \(zone.zoneName) doesn't exist: create it before subscribing to it")
            }
            members["zoneID"] = context.coding.json(zone)
            members["zoneWide"] = true
        case "query":
            guard let query = wire["query"], query["recordType"]?.string != nil else {
                throw .badRequest("a query subscription needs a query with a recordType")
            }
            for filter in query["filterBy"]?.array ?? [] { _ = try QueryFilter(filter, coding: context.coding) }
            let firesOn = wire["firesOn"]?.array?.compactMap(\.string) ?? []
            guard !firesOn.isEmpty, firesOn.allSatisfy(["create", "update", "delete"].contains) else {
                throw .badRequest("a query subscription's firesOn lists create, update and/or delete")
            }
            if wire["zoneWide"]?.bool != true {
                members["zoneID"] = context.coding.json(try context.coding.zoneID(wire["zoneID"]))
            }
        case "database":
            guard context.key.scope != .public else {
                throw .badRequest("database subscriptions serve the private and shared databases")
            }
        case let other:
            throw .badRequest("unknown subscriptionType \(other ?? "none"): zone, query or database")
        }
        return .object(members)
    }
}
