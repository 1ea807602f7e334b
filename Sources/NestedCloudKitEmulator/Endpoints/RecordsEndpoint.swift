import Foundation
import NestedCloudKitCodable

/// `records/modify` and `records/lookup`.
enum RecordsEndpoint {
    /// The seven operation types of `records/modify`.
    enum Operation: String, Sendable {
        case create, update, forceUpdate, replace, forceReplace, delete, forceDelete

        var isDelete: Bool { self == .delete || self == .forceDelete }
        /// Whether the operation checks the record's change tag.
        var checksTag: Bool { self == .update || self == .replace || self == .delete }
        /// Whether fields the operation doesn't send are cleared.
        var replacesFields: Bool { self == .replace || self == .forceReplace }
    }

    private struct Planned: Sendable {
        var operation: Operation
        var name: String
        var wire: JSONValue
        var desiredKeys: [String]?
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
        let items: [JSONValue] = zip(ids, wanted).map { id, item in
            switch results[id] {
            case .success(let record)?:
                return context.coding.json(record, desiredKeys: context.desiredKeys(item["desiredKeys"]) ?? desiredKeys)
            case .failure(let error)?: return ServerError(error).item(["recordName": .string(id.recordName)])
            case nil:
                return ServerError(.notFound, "no record \(id.recordName)").item(["recordName": .string(id.recordName)])
            }
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
        // Atomic saves are a custom zone's: CloudKit ignores `atomic` in the default zone.
        let atomic = (context.body["atomic"]?.bool ?? true) && zone != .default
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
            let wire = operation["record"] ?? .null
            guard let name = wire["recordName"]?.string, !name.isEmpty else {
                throw .badRequest("each operation's record needs a recordName")
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

    /// Checks each operation against the server's records, then writes all that passed in one request to the
    /// database. Runs holding the database's write lock, so no other request changes a record in between.
    private static func apply(_ operations: [Planned], zone: CloudRecord.ZoneID, atomic: Bool, context: DatabaseRequest)
        async throws(ServerError) -> [JSONValue]
    {
        var planned = operations
        let ids = planned.map { CloudRecord.ID(recordName: $0.name, zoneID: zone) }
        let current = try await call { try await context.database.records(for: ids, desiredKeys: nil) }
        var saves: [CloudRecord] = []
        var deletes: [CloudRecord.ID] = []
        for index in planned.indices {
            let operation = planned[index]
            do throws(ServerError) {
                let existing = try serverRecord(ids[index], in: current)
                try checkPrecondition(of: operation, existing: existing)
                if operation.operation.isDelete {
                    deletes.append(ids[index])
                } else {
                    saves.append(try await recordToSave(operation, existing: existing, zone: zone, context: context))
                }
            } catch {
                planned[index].failure = error
            }
        }
        if atomic && planned.contains(where: { $0.failure != nil }) {
            return planned.map { operation in
                (operation.failure
                    ?? ServerError(.atomicError, "another operation of this atomic request failed"))
                    .item(["recordName": .string(operation.name)])
            }
        }
        var results: CloudModifyResults = ([:], [:])
        if !saves.isEmpty || !deletes.isEmpty {
            results = try await call {
                try await context.database.modifyRecords(
                    saving: saves, deleting: deletes, savePolicy: .allKeys, atomically: atomic)
            }
            context.handle.noteWrite()
        }
        let (items, notified) = answers(
            to: planned, ids: ids, results: results, current: current, zone: zone, context: context)
        if !notified.isEmpty {
            await context.state.notifications.recordsChanged(notified, in: context.handle, coding: context.coding)
        }
        return items
    }

    /// The server's copy of a record; a missing zone fails each operation, naming the zone, as CloudKit answers per
    /// record.
    private static func serverRecord(_ id: CloudRecord.ID, in current: CloudRecordResults) throws(ServerError)
        -> CloudRecord?
    {
        switch current[id] {
        case .success(let record)?: return record
        case .failure(.zoneNotFound(let zone))?, .failure(.userDeletedZone(let zone))?:
            throw ServerError(.zoneNotFound, "zone \(zone.zoneName) doesn't exist: create it with zones/modify")
        default: return nil
        }
    }

    /// What an operation requires of the server's copy: none for `create`, a matching change tag for the ones that
    /// check it (a `delete` only when it sends one).
    private static func checkPrecondition(of operation: Planned, existing: CloudRecord?) throws(ServerError) {
        let type = operation.operation
        if type == .create, existing != nil {
            throw ServerError(.exists, "record \(operation.name) exists: update it with its recordChangeTag")
        }
        guard type.checksTag else { return }
        guard let existing else { throw ServerError(.notFound, "record \(operation.name) doesn't exist") }
        let sentTag = operation.wire["recordChangeTag"]?.string
        guard type != .delete || sentTag != nil else { return }
        guard let sentTag else {
            let forced = "force" + type.rawValue.prefix(1).uppercased() + type.rawValue.dropFirst()
            throw ServerError.badRequest(
                "\(type.rawValue) of \(operation.name) needs the recordChangeTag it was fetched with; \(forced) overwrites"
            )
        }
        if existing.systemFields?.changeTag != sentTag {
            throw ServerError(
                .conflict,
                "record \(operation.name) changed on the server (tag \(existing.systemFields?.changeTag ?? "none"), sent \(sentTag)): fetch it and apply the change again"
            )
        }
    }

    /// The record a save writes: the wire's fields, checked against the schema, merged over the server's for an
    /// update, within CloudKit's size limit.
    private static func recordToSave(
        _ operation: Planned, existing: CloudRecord?, zone: CloudRecord.ZoneID, context: DatabaseRequest
    ) async throws(ServerError) -> CloudRecord {
        var record = try context.coding.record(operation.wire, zone: zone, current: existing)
        try await context.state.schema.check(record, key: context.key)
        record.systemFields = nil
        // Every save goes as `allKeys`: the change tag is checked above, under the lock, and the fields an
        // update doesn't send are the server's.
        if operation.operation.replacesFields {
            record.clearedFieldNames = []
        } else if let existing {
            var merged = existing.fields
            for (name, value) in record.fields { merged[name] = value }
            for name in record.clearedFieldNames { merged[name] = nil }
            record.fields = merged
            record.clearedFieldNames = []
        }
        // Checked here, on the fields the record will hold, so that the reason names the record and its
        // size; the database's own check (the shared rules) would say only that it is too large.
        let size = CloudModificationPlan.fieldDataSize(of: record)
        if size > CloudModificationPlan.maximumRecordSize {
            throw ServerError.badRequest(
                "record too large: \(operation.name) holds \(size) bytes of field data; CloudKit takes at most 1 MB (\(CloudModificationPlan.maximumRecordSize) bytes) a record, assets not counted: keep large values in assets"
            )
        }
        return record
    }

    /// The answer for each operation, in order, and the changes subscriptions hear of.
    private static func answers(
        to planned: [Planned], ids: [CloudRecord.ID], results: CloudModifyResults, current: CloudRecordResults,
        zone: CloudRecord.ZoneID, context: DatabaseRequest
    ) -> ([JSONValue], [ChangedRecord]) {
        var notified: [ChangedRecord] = []
        let items: [JSONValue] = zip(planned, ids).map { operation, id in
            let name: JSONValue = .string(operation.name)
            if let failure = operation.failure { return failure.item(["recordName": name]) }
            if operation.operation.isDelete {
                switch results.deleteResults[id] {
                case .success?:
                    if case .success(let before)? = current[id] {
                        notified.append(.init(record: before, change: .deleted))
                    }
                    return ["recordName": name, "deleted": true, "zoneID": context.coding.json(zone)]
                case .failure(let error)?: return ServerError(error).item(["recordName": name])
                case nil: return ServerError(.internalError, "no result").item(["recordName": name])
                }
            }
            switch results.saveResults[id] {
            case .success(let saved)?:
                let existed = if case .success? = current[id] { true } else { false }
                notified.append(.init(record: saved, change: existed ? .updated : .created))
                return context.coding.json(saved, desiredKeys: operation.desiredKeys)
            case .failure(let error)?: return ServerError(error).item(["recordName": name])
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
