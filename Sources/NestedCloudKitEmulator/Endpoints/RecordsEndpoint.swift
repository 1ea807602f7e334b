import Foundation
import NestedCloudKitCodable
import NestedCloudKitRules
import NestedCloudKitServer

/// `records/modify` and `records/lookup`.
enum RecordsEndpoint {
    /// The seven operation types of `records/modify`, as the wire names them.
    enum Operation: String, Sendable {
        case create, update, forceUpdate, replace, forceReplace, delete, forceDelete

        var isDelete: Bool { self == .delete || self == .forceDelete }
        /// Whether the operation needs the record's change tag, which a client must then send.
        var needsChangeTag: Bool { self == .update || self == .replace }
    }

    private struct Planned: Sendable {
        var operation: Operation
        var name: String
        var wire: JSONValue
        var desiredKeys: [String]?
        /// The item for the rules engine, once read from the wire.
        var item: CloudRecordOperation?
        var failure: ServerError?
    }

    static func lookUp(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        let zone = try context.coding.zoneID(context.body["zoneID"])
        guard let wanted = context.body["records"]?.array else { throw .badRequest("records/lookup needs records") }
        guard wanted.count <= DatabaseRequest.maximumItems else {
            throw .badRequest(
                "records/lookup takes at most \(DatabaseRequest.maximumItems) records; got \(wanted.count)")
        }
        let desiredKeys = context.desiredKeys(context.body["desiredKeys"])
        var names: [String] = []
        for item in wanted {
            guard let name = item["recordName"]?.string else { throw .badRequest("each record needs a recordName") }
            names.append(name)
        }
        let ids = names.map { CloudRecord.ID(recordName: $0, zoneID: zone) }
        let results = try await call { try await context.database.records(for: ids, desiredKeys: nil) }
        var found: [CloudRecord.ID: OutgoingRecord] = [:]
        for (id, item) in zip(ids, wanted) {
            guard case .success(let record)? = results[id] else { continue }
            found[id] = await context.coding.outgoing(
                record, desiredKeys: context.desiredKeys(item["desiredKeys"]) ?? desiredKeys)
        }
        let items: [JSONValue] = zip(ids, wanted).map { id, item in
            if let record = found[id] { return context.coding.json(record) }
            if case .failure(let error)? = results[id] {
                return ServerError(error).item(["recordName": .string(id.recordName)])
            }
            return ServerError(.notFound, "no record \(id.recordName)").item(["recordName": .string(id.recordName)])
        }
        return ["records": .array(items)]
    }

    static func modify(_ context: DatabaseRequest) async throws(ServerError) -> JSONValue {
        if context.caller == .anonymous {
            throw context.state.authenticationRequired(context.request, reason: "saving records needs a signed-in user")
        }
        let zone = try context.coding.zoneID(context.body["zoneID"])
        guard let operations = context.body["operations"]?.array, !operations.isEmpty else {
            throw .badRequest("records/modify needs operations")
        }
        guard operations.count <= DatabaseRequest.maximumItems else {
            throw .badRequest(
                "records/modify takes at most \(DatabaseRequest.maximumItems) operations; got \(operations.count): split the request"
            )
        }
        // The rules engine leaves the default zone's items standing alone, as CloudKit ignores `atomic` there.
        let atomic = context.body["atomic"]?.bool ?? true
        let desiredKeys = context.desiredKeys(context.body["desiredKeys"])
        var planned: [Planned] = []
        var seen: Set<String> = []
        for operation in operations {
            let typeName = operation["operationType"]?.string ?? ""
            guard let type = Operation(rawValue: typeName) else {
                throw .badRequest(
                    "unknown operationType \(typeName): create, update, forceUpdate, replace, forceReplace, delete or forceDelete"
                )
            }
            var wire = operation["record"] ?? .null
            let name: String
            if let given = wire["recordName"]?.string, !given.isEmpty {
                name = given
            } else if type == .create, case .object(var members) = wire {
                // "If you don't provide a record name, CloudKit assigns one for you" ("Modifying Records"): a random
                // UUID, as CloudKit JS documents, which the answer's record carries.
                name = UUID().uuidString
                members["recordName"] = .string(name)
                wire = .object(members)
            } else {
                throw .badRequest(
                    "a \(typeName) operation's record needs a recordName (only a create may leave it out, and CloudKit "
                        + "assigns one)")
            }
            guard seen.insert(name).inserted else {
                throw .badRequest("record \(name) appears twice: one operation per record in a request")
            }
            planned.append(
                Planned(
                    operation: type, name: name, wire: wire,
                    desiredKeys: context.desiredKeys(operation["desiredKeys"]) ?? desiredKeys))
        }
        let operationsToApply = planned
        let items = try await context.handle.exclusively { () async throws(ServerError) -> [JSONValue] in
            try await apply(operationsToApply, zone: zone, atomic: atomic, context: context)
        }
        return ["records": .array(items)]
    }

    /// Reads each operation into an item of the rules engine, then has the database apply them all in one
    /// request: the database keeps CloudKit's rules (change tags, an existing record, merging an update's fields,
    /// atomic zones), as it does for every other caller. Runs holding the database's write lock, so no other
    /// request changes a record in between.
    private static func apply(_ operations: [Planned], zone: CloudRecord.ZoneID, atomic: Bool, context: DatabaseRequest)
        async throws(ServerError) -> [JSONValue]
    {
        var planned = operations
        let ids = planned.map { CloudRecord.ID(recordName: $0.name, zoneID: zone) }
        let readsFirst = await mustReadFirst(operations, handle: context.handle)
        var current: CloudRecordResults = [:]
        if readsFirst {
            current = try await call { try await context.database.records(for: ids, desiredKeys: nil) }
            current = await heldAssetsRead(current, sentBackBy: operations, ids: ids)
        }
        var failures: [CloudRecord.ID: CloudDatabaseError] = [:]
        for index in planned.indices {
            do throws(ServerError) {
                let existing = try? current[ids[index]]?.get()
                planned[index].item = try await item(
                    for: planned[index], id: ids[index], existing: existing, zone: zone, context: context)
            } catch {
                planned[index].failure = error
                // A failure of the wire's counts as the item's for the atomic rule, which the database applies.
                failures[ids[index]] = .invalidArguments(error.reason)
            }
        }
        linkNewSharesToRoots(&planned, zone: zone)
        let items = planned.compactMap(\.item)
        var results: CloudModifyResults = ([:], [:])
        if !items.isEmpty {
            results = try await call {
                try await context.database.modifyRecords(items, atomically: atomic, failing: failures)
            }
            context.handle.noteWrite()
        }
        if !readsFirst, results.saveResults.values.contains(where: { $0.failureKind.map(Self.isTooLarge) ?? false }) {
            // The refusal names the size the record would have had, which an update's fields over the held ones
            // make: read them now, after the fact, as only a refusal needs them.
            current = try await call { try await context.database.records(for: ids, desiredKeys: nil) }
        }
        var saved: [CloudRecord.ID: OutgoingRecord] = [:]
        for (operation, id) in zip(planned, ids) {
            guard case .success(let record)? = results.saveResults[id] else { continue }
            saved[id] = await context.coding.outgoing(record, desiredKeys: operation.desiredKeys)
        }
        let (answers, notified) = answers(
            to: planned, ids: ids, results: results, current: current, saved: saved, zone: zone, context: context)
        if !notified.isEmpty {
            await context.state.notifications.recordsChanged(notified, in: context.handle, coding: context.coding)
        }
        await context.state.notifyDatabasesChangedByOthers(after: context.handle)
        return answers
    }

    /// Whether a write must read the records it names before it applies: a query subscription of the database
    /// tells created from updated records and reads a deleted record's fields; a share keeps its root from the held
    /// share; an asset sent back as it was fetched is matched against the record's copy. Otherwise the database's
    /// own rules decide alone (change tags, an existing record, merging an update's fields), and nothing is read.
    private static func mustReadFirst(_ operations: [Planned], handle: DatabaseHandle) async -> Bool {
        let subscriptions = await handle.subscriptions.all
        if subscriptions.contains(where: { if case .query = $0.rule.kind { true } else { false } }) { return true }
        return operations.contains { operation in
            operation.wire["recordType"]?.string == CloudShare.recordType
                || sendsHeldAsset(operation.wire["fields"] ?? .null)
        }
    }

    /// The held records whose assets the operations send back as fetched, those assets' bytes read through
    /// ``AssetFile`` (off the cooperative pool): the save matches them by checksum, and saves them again.
    private static func heldAssetsRead(
        _ current: CloudRecordResults, sentBackBy operations: [Planned], ids: [CloudRecord.ID]
    ) async -> CloudRecordResults {
        var read = current
        for (operation, id) in zip(operations, ids) where sendsHeldAsset(operation.wire["fields"] ?? .null) {
            guard case .success(let record)? = current[id] else { continue }
            read[id] = .success(await AssetFile.withContents(record))
        }
        return read
    }

    /// Whether a value holds an asset sent back as fetched: a checksum, with neither an upload's receipt nor
    /// embedded bytes.
    private static func sendsHeldAsset(_ value: JSONValue) -> Bool {
        switch value {
        case .object(let members):
            if members["fileChecksum"] != nil, members["receipt"] == nil, members["data"] == nil { return true }
            return members.values.contains(where: sendsHeldAsset)
        case .array(let elements): return elements.contains(where: sendsHeldAsset)
        default: return false
        }
    }

    private static func isTooLarge(_ kind: CloudDatabaseError.Kind) -> Bool {
        if case .limitExceeded = kind { true } else { false }
    }

    /// Gives each share saved its root: the record of the request whose `share` names it, as a request says what
    /// a record share shares (the share record on the wire doesn't name it).
    private static func linkNewSharesToRoots(_ planned: inout [Planned], zone: CloudRecord.ZoneID) {
        var roots: [String: CloudRecord.ID] = [:]
        for operation in planned where operation.item?.recordToSave != nil {
            if let share = operation.wire["share"]?["recordName"]?.string {
                roots[share] = CloudRecord.ID(recordName: operation.name, zoneID: zone)
            }
        }
        guard !roots.isEmpty else { return }
        for index in planned.indices {
            guard let root = roots[planned[index].name], let item = planned[index].item else { continue }
            planned[index].item = item.mappingRecord { record in
                guard record.recordType == CloudShare.recordType else { return record }
                var linked = record
                linked.shareContents?.rootRecordID = root
                return linked
            }
        }
    }

    /// The operation as an item of the rules engine: a deletion by ID (with the change tag a `delete` sends), or
    /// the record read from the wire and checked against the schema.
    private static func item(
        for operation: Planned, id: CloudRecord.ID, existing: CloudRecord?, zone: CloudRecord.ZoneID,
        context: DatabaseRequest
    ) async throws(ServerError) -> CloudRecordOperation {
        let sentTag = operation.wire["recordChangeTag"]?.string
        if operation.operation.needsChangeTag, sentTag == nil {
            let type = operation.operation.rawValue
            let forced = "force" + type.prefix(1).uppercased() + type.dropFirst()
            throw ServerError.badRequest(
                "\(type) of \(operation.name) needs the recordChangeTag it was fetched with; \(forced) overwrites")
        }
        func saving(_ item: (CloudRecord) -> CloudRecordOperation) async throws(ServerError) -> CloudRecordOperation {
            let record = try context.coding.record(operation.wire, zone: zone, current: existing)
            try await context.state.schema.check(record, key: context.key)
            return item(record)
        }
        switch operation.operation {
        case .create: return try await saving(CloudRecordOperation.create)
        case .update: return try await saving(CloudRecordOperation.update)
        case .forceUpdate: return try await saving(CloudRecordOperation.forceUpdate)
        case .replace: return try await saving(CloudRecordOperation.replace)
        case .forceReplace: return try await saving(CloudRecordOperation.forceReplace)
        case .delete: return .delete(id, changeTag: sentTag)
        case .forceDelete: return .forceDelete(id)
        }
    }

    /// The wire's error for an item the database failed, worded for the operation the client sent.
    private static func failure(
        _ error: CloudDatabaseError, of operation: Planned, existing: CloudRecord?
    ) -> ServerError {
        switch (error.kind, operation.item) {
        case (.serverRecordChanged, .create?):
            return ServerError(.exists, "record \(operation.name) exists: update it with its recordChangeTag")
        case (.serverRecordChanged(let server, let client, _), _):
            return ServerError(
                .conflict,
                "record \(operation.name) changed on the server (tag \(server.systemFields?.changeTag ?? "none"), sent \(client.systemFields?.changeTag ?? "none")): fetch it and apply the change again"
            )
        case (.limitExceeded, let item?):
            // Worded here, with the fields the record would hold, so that the reason names the record and its
            // size; the rules say only that it is too large, as CloudKit's framework does.
            let size = CloudRequestRules.fieldDataSize(of: item.storedFields(over: existing))
            return ServerError.badRequest(
                "record too large: \(operation.name) holds \(size) bytes of field data; CloudKit takes at most 1 MB (\(CloudRequestRules.maximumRecordSize) bytes) a record, assets not counted: keep large values in assets"
            )
        case (.batchRequestFailed, _):
            return ServerError(.atomicError, "another operation of this atomic request failed")
        default:
            return ServerError(error)
        }
    }

    /// The answer for each operation, in order, and the changes subscriptions hear of.
    private static func answers(
        to planned: [Planned], ids: [CloudRecord.ID], results: CloudModifyResults, current: CloudRecordResults,
        saved: [CloudRecord.ID: OutgoingRecord], zone: CloudRecord.ZoneID, context: DatabaseRequest
    ) -> ([JSONValue], [ChangedRecord]) {
        var notified: [ChangedRecord] = []
        let items: [JSONValue] = zip(planned, ids).map { operation, id in
            let name: JSONValue = .string(operation.name)
            if let failure = operation.failure { return failure.item(["recordName": name]) }
            if operation.operation.isDelete {
                switch results.deleteResults[id] {
                case .success?:
                    switch current[id] {
                    case .success(let before)?: notified.append(.init(record: before, change: .deleted))
                    // Not read first, as no query subscription needs its fields: zone and database subscriptions
                    // need only its ID.
                    case nil: notified.append(.init(record: CloudRecord(recordType: "", id: id), change: .deleted))
                    case .failure?: break
                    }
                    return ["recordName": name, "deleted": true, "zoneID": context.coding.json(zone)]
                case .failure(let error)?:
                    return failure(error, of: operation, existing: try? current[id]?.get()).item(["recordName": name])
                case nil: return ServerError(.internalError, "no result").item(["recordName": name])
                }
            }
            switch results.saveResults[id] {
            case .success(let record)?:
                let existed = if case .success? = current[id] { true } else { false }
                notified.append(.init(record: record, change: existed ? .updated : .created))
                guard let answer = saved[id] else {
                    return ServerError(.internalError, "no record \(name) to answer with").item(["recordName": name])
                }
                return context.coding.json(answer)
            case .failure(let error)?:
                return failure(error, of: operation, existing: try? current[id]?.get()).item(["recordName": name])
            case nil: return ServerError(.internalError, "no result").item(["recordName": name])
            }
        }
        return (items, notified)
    }

    /// Runs a database call, turning its errors into the wire's.
    static func call<T: Sendable>(_ body: () async throws -> T) async throws(ServerError) -> T {
        do {
            return try await body()
        } catch let error as CloudDatabaseError {
            throw ServerError(error)
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError(.internalError, FilePaths.removed(from: "\(error)"))
        }
    }
}
