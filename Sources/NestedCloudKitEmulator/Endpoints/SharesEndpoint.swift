import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer

/// `records/resolve` and `records/accept`: what a share's short GUID stands for, and accepting it as the signed-in
/// user. The reference puts both under the public database's path; the emulator answers them under any, since
/// they act on the container's users, not on one database.
///
/// The request is `{shortGUIDs: [{value, shouldFetchRootRecord, rootRecordDesiredKeys}]}` (a plain string stands
/// for `{value}`), the answer `{results: [...]}` in the same order: for a share the user may see, its short GUID,
/// container, environment, `databaseScope: SHARED`, zone, root record name, the share, the root record when asked,
/// the owner's identity and the user's participant type, status and permission (the names of CKToolJS's
/// `CKDBResolvedRecord`); for another, `serverErrorCode` and `reason` beside the short GUID.
enum SharesEndpoint {
    static func resolve(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        try await results(context, endpoint: "records/resolve") { server, user, item in
            try await server.shareMetadata(
                shortGUID: item.value, fetchingRootRecord: item.fetchesRootRecord)
        }
    }

    static func accept(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        try await results(context, endpoint: "records/accept") { server, user, item in
            _ = try await server.acceptShare(shortGUID: item.value)
            return try await server.shareMetadata(shortGUID: item.value, fetchingRootRecord: item.fetchesRootRecord)
        }
    }

    /// One short GUID of a request.
    struct Item: Sendable {
        var value: String
        var fetchesRootRecord: Bool
        var rootRecordDesiredKeys: [String]?
    }

    private static func results(
        _ context: DatabaseRequest, endpoint: String,
        _ body: @Sendable (any ShareAcceptingDatabase, String, Item) async throws -> CloudShare.Metadata
    ) async throws(ServerError) -> JSONValue {
        guard let user = context.caller.userName else {
            throw context.state.authenticationRequired(context.request, reason: "\(endpoint) needs a signed-in user")
        }
        let items = try self.items(context.body, endpoint: endpoint)
        let key = context.key
        let shared = try await context.state.registry.handle(
            for: DatabaseKey(container: key.container, environment: key.environment, scope: .shared, user: user))
        let coding = context.state.coding(for: shared, baseURL: context.request.baseURL)
        guard let database = shared.database as? any ShareAcceptingDatabase else {
            throw ServerError(.internalError, "\(endpoint): the shared database of \(user) takes no shares")
        }
        var results: [JSONValue] = []
        for item in items {
            let identifying: [String: JSONValue] = ["shortGUID": .string(item.value)]
            do {
                let metadata = try await body(database, user, item)
                results.append(await json(metadata, item: item, key: key, coding: coding))
            } catch let error as CloudDatabaseError {
                results.append(ServerError(error).item(identifying))
            } catch {
                results.append(ServerError(.internalError, FilePaths.removed(from: "\(error)")).item(identifying))
            }
        }
        shared.noteWrite()
        await context.state.notifyDatabasesChangedByOthers(after: shared)
        return ["results": .array(results)]
    }

    private static func items(_ body: JSONValue, endpoint: String) throws(ServerError) -> [Item] {
        guard let list = body["shortGUIDs"]?.array, !list.isEmpty else {
            throw .badRequest("\(endpoint) needs shortGUIDs: [{value: \"...\"}]")
        }
        guard list.count <= DatabaseRequest.maximumItems else {
            throw .badRequest("\(endpoint) takes at most \(DatabaseRequest.maximumItems) shortGUIDs; got \(list.count)")
        }
        var items: [Item] = []
        for entry in list {
            guard let value = entry.string ?? entry["value"]?.string, !value.isEmpty else {
                throw .badRequest("\(endpoint): each short GUID is {value: \"...\"}, got \(entry)")
            }
            items.append(
                Item(
                    value: value, fetchesRootRecord: entry["shouldFetchRootRecord"]?.bool ?? false,
                    rootRecordDesiredKeys: entry["rootRecordDesiredKeys"]?.array?.compactMap(\.string)))
        }
        return items
    }

    private static func json(
        _ metadata: CloudShare.Metadata, item: Item, key: DatabaseKey, coding: WireCoding
    ) async -> JSONValue {
        var object: [String: JSONValue] = [
            "shortGUID": .string(item.value),
            "containerIdentifier": .string(key.container),
            "environment": .string(key.environment.rawValue),
            "databaseScope": "SHARED",
            "zoneID": coding.json(metadata.share.id.zoneID),
            "share": coding.json(await coding.outgoing(metadata.share.record)),
            "ownerIdentity": ["userRecordName": .string(metadata.ownerUserRecordName)],
            "participantType": .string(metadata.participantRole.rawValue),
            "participantStatus": .string(metadata.participantStatus.rawValue),
            "participantPermission": .string(metadata.participantPermission.rawValue),
        ]
        if let root = metadata.rootRecordID { object["rootRecordName"] = .string(root.recordName) }
        if let record = metadata.rootRecord {
            object["rootRecord"] = coding.json(await coding.outgoing(record, desiredKeys: item.rootRecordDesiredKeys))
        }
        return .object(object)
    }
}
