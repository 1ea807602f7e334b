import Foundation
import Hummingbird
import NestedCloudKitCodable

/// The admin API under `/emulator/v1/`: health, reset, sign-in, the databases and their records, faults, the
/// clock, schemas, import and export, the request log and the fidelity list. ``AdminAccess`` has let the request in:
/// no page of another origin, and the admin token when the emulator has one.
struct AdminAPI: Sendable {
    let state: EmulatorState

    static let version = "1.0.0"

    /// The most records or logged requests one admin answer holds (`limit`), and the records `GET records`
    /// returns when it names no `limit`.
    static let maximumPage = 1000

    /// The admin API's routes, on the group under `/emulator/v1/`.
    func register(on group: RouterGroup<EmulatorRequestContext>) {
        group.answer(.get, "health") { _ throws(ServerError) in .json(health) }
        group.answer(.post, "reset") { _ throws(ServerError) in
            try await state.reset()
            return .json(["status": "reset"])
        }
        group.answer(.post, "sign-in") { context throws(ServerError) in
            .json(try await signIn(context.request.jsonBody()))
        }
        group.answer(.get, "databases") { _ throws(ServerError) in .json(await databases()) }
        group.answer(.get, "shares") { context throws(ServerError) in
            .json(try await shares(context.request.query, baseURL: context.request.baseURL))
        }
        group.answer(.get, "records") { context throws(ServerError) in
            let request = context.request
            let limit = try Self.limit(request.query["limit"], default: Self.maximumPage)
            return .json(
                try await page(
                    of: key(request.query), after: request.query["continuation"], limit: limit, baseURL: request.baseURL
                ))
        }
        registerLogAndFaults(on: group)
        group.answer(.get, "clock") { _ throws(ServerError) in .json(clock) }
        group.answer(.post, "clock") { context throws(ServerError) in
            let body = try context.request.jsonBody()
            if let offset = body["offsetSeconds"]?.double { state.clock.setOffset(offset) }
            if let advance = body["advanceSeconds"]?.double { state.clock.advance(by: advance) }
            return .json(clock)
        }
        group.answer(.get, "schema") { context throws(ServerError) in try await schema(context.request.query) }
        group.answer(.post, "schema") { context throws(ServerError) in
            let (container, environment) = try schemaKey(context.request.query)
            try await state.schema.importSchema(
                String(decoding: context.request.body, as: UTF8.self), container: container, environment: environment)
            return .json(["status": "imported"])
        }
        group.answer(.get, "export") { context throws(ServerError) in
            .json(try await export(baseURL: context.request.baseURL))
        }
        group.answer(.post, "import") { context throws(ServerError) in
            .json(try await importDatabases(context.request.jsonBody()))
        }
        group.answer(.get, "fidelity") { _ throws(ServerError) in
            .json(["entries": .array(Fidelity.entries.map(Self.json))])
        }
    }

    /// The request log and the faults in force.
    private func registerLogAndFaults(on group: RouterGroup<EmulatorRequestContext>) {
        group.answer(.get, "requests") { context throws(ServerError) in
            .json(try requests(limit: context.request.query["limit"]))
        }
        group.answer(.delete, "requests") { _ throws(ServerError) in
            state.log.clear()
            return .json(["requests": []])
        }
        group.answer(.get, "faults") { _ throws(ServerError) in .json(faults) }
        group.answer(.post, "faults") { context throws(ServerError) in .json(try addFault(context.request.body)) }
        group.answer(.delete, "faults") { context throws(ServerError) in
            state.faults.remove(id: context.request.query["id"])
            return .json(faults)
        }
    }

    private var health: JSONValue {
        [
            "status": "ok", "version": .string(Self.version),
            "environment": .string(state.configuration.environment.rawValue),
            "uptimeSeconds": .int(Int64(Date().timeIntervalSince(state.started))),
            "storage": .string(storageDescription),
        ]
    }

    /// A web auth token for a user, as a client gets it by signing in.
    private func signIn(_ body: JSONValue) async throws(ServerError) -> JSONValue {
        guard let user = body["user"]?.string, !user.isEmpty else {
            throw .badRequest("sign-in needs {\"user\": \"NAME\"}")
        }
        try DatabaseNames.check(user: user)
        if let discoverable = body["discoverable"], !discoverable.isNull {
            guard let givenName = discoverable["givenName"]?.string, !givenName.isEmpty else {
                throw .badRequest(
                    "discoverable is {\"givenName\": ..., \"familyName\": ..., \"emailAddress\": ..., \"phoneNumber\": ...}, "
                        + "with a givenName")
            }
            state.users.publish(
                user,
                as: EmulatorUserIdentity(
                    givenName: givenName, familyName: discoverable["familyName"]?.string ?? "",
                    emailAddress: discoverable["emailAddress"]?.string, phoneNumber: discoverable["phoneNumber"]?.string
                ))
        }
        let token = await state.tokens.issue(for: user)
        return ["ckWebAuthToken": .string(token), "userRecordName": .string(Caller.userRecordName(for: user))]
    }

    /// Every database the emulator has, with the revision of those open.
    private func databases() async -> JSONValue {
        var databases: [JSONValue] = []
        for key in await state.registry.keys() {
            guard case .object(var members) = Self.json(key) else { continue }
            if let handle = await state.registry.openHandle(for: key) {
                members["revision"] = .int(Int64(handle.revision))
            }
            databases.append(.object(members))
        }
        return ["databases": .array(databases)]
    }

    /// The last requests of the log, at most `limit` (the whole log by default).
    private func requests(limit: String?) throws(ServerError) -> JSONValue {
        let entries = state.log.all
        let limit = try Self.limit(limit, default: RequestLog.capacity)
        return ["requests": .array(entries.suffix(limit).map(Self.json)), "count": .int(Int64(entries.count))]
    }

    private var faults: JSONValue { ["faults": .array(state.faults.all.map(Self.json))] }

    private func addFault(_ body: Data) throws(ServerError) -> JSONValue {
        let fault: EmulatorFault
        do {
            fault = try JSONDecoder().decode(EmulatorFault.self, from: body)
        } catch {
            throw .badRequest(
                "a fault is {path, recordName, serverErrorCode, retryAfter, latencyMilliseconds, loseResponse, remaining}: \(error)"
            )
        }
        return Self.json(try state.faults.add(fault))
    }

    /// A container's schema, in CloudKit's schema language.
    private func schema(_ query: [String: String]) async throws(ServerError) -> EmulatorResponse {
        let (container, environment) = try schemaKey(query)
        let schema = try await state.schema.schema(container: container, environment: environment)
        return EmulatorResponse(
            status: 200, headers: ["Content-Type": "text/plain; charset=UTF-8"], body: Data(schema.text.utf8))
    }

    private var storageDescription: String {
        switch state.configuration.storage {
        case .inMemory: "in-memory"
        case .directory(let path): path
        }
    }

    private var clock: JSONValue {
        [
            "now": .string(ISO8601DateFormatter().string(from: state.clock.now())),
            "offsetSeconds": .double(state.clock.offsetSeconds),
        ]
    }

    /// `GET shares?container=NAME&user=NAME`: the shares a user owns and those they are invited to or joined,
    /// each with its URL, what it shares and who takes part.
    private func shares(_ query: [String: String], baseURL: String) async throws(ServerError) -> JSONValue {
        guard let container = query["container"], let user = query["user"] else {
            throw .badRequest("shares needs ?container=NAME&user=NAME[&environment=...]")
        }
        let environment =
            query["environment"].flatMap(EmulatorEnvironment.init(rawValue:)) ?? state.configuration.environment
        try DatabaseNames.check(
            DatabaseKey(container: container, environment: environment, scope: .private, user: user))
        guard
            let server = try await state.registry.existingSharingServer(container: container, environment: environment)
        else {
            return ["shares": []]
        }
        let userRecordName = Caller.userRecordName(for: user)
        let shares: [(owner: String, record: CloudRecord)]
        do {
            shares = try await server.shares(involving: userRecordName)
        } catch {
            throw ServerError(.internalError, "couldn't read the shares: \(FilePaths.removed(from: "\(error)"))")
        }
        var items: [JSONValue] = []
        for (owner, record) in shares {
            guard let share = try? CloudShare(record: record) else { continue }
            var item: [String: JSONValue] = [
                "owner": .string(owner),
                "role": owner == userRecordName ? "OWNER" : "PARTICIPANT",
                "zoneName": .string(record.id.zoneID.zoneName),
                "recordName": .string(record.id.recordName),
                "zoneWide": .bool(share.isZoneWide),
                "publicPermission": .string(share.publicPermission.rawValue),
                "participants": .array(
                    share.participants.map { participant in
                        [
                            "userRecordName": participant.userRecordName.map(JSONValue.string) ?? .null,
                            "type": .string(participant.role.rawValue),
                            "permission": .string(participant.permission.rawValue),
                            "acceptanceStatus": .string(participant.acceptanceStatus.rawValue),
                        ]
                    }),
            ]
            if let title = share.title { item["title"] = .string(title) }
            if let root = share.rootRecordID { item["rootRecordName"] = .string(root.recordName) }
            if let shortGUID = share.shortGUID {
                item["shortGUID"] = .string(shortGUID)
                item["url"] = .string(baseURL + SharePage.prefix + shortGUID)
            }
            items.append(.object(item))
        }
        return ["user": .string(user), "userRecordName": .string(userRecordName), "shares": .array(items)]
    }

    private func schemaKey(_ query: [String: String]) throws(ServerError) -> (String, EmulatorEnvironment) {
        guard let container = query["container"] else { throw .badRequest("schema needs ?container=NAME") }
        try DatabaseNames.check(container: container)
        let environment =
            query["environment"].flatMap(EmulatorEnvironment.init(rawValue:)) ?? state.configuration.environment
        return (container, environment)
    }

    private func key(_ query: [String: String]) throws(ServerError) -> DatabaseKey {
        guard let container = query["container"], let scope = query["scope"].flatMap(DatabaseKey.Scope.init(rawValue:))
        else {
            throw .badRequest("records needs ?container=NAME&scope=public|private|shared[&user=NAME][&environment=...]")
        }
        let environment =
            query["environment"].flatMap(EmulatorEnvironment.init(rawValue:)) ?? state.configuration.environment
        let key = DatabaseKey(container: container, environment: environment, scope: scope, user: query["user"])
        try DatabaseNames.check(key)
        return key
    }

    /// Where a page of records ended: its last record's zone, type and name, the order pages go in.
    private struct Position: Codable, Comparable {
        var zone: String
        var type: String
        var name: String

        static func < (a: Position, b: Position) -> Bool { (a.zone, a.type, a.name) < (b.zone, b.type, b.name) }
    }

    /// One page of a database's records, for the dashboard: `{zones: [{zoneID, records}], continuation, revision}`.
    ///
    /// Records go by zone name, then record type, then record name; a page holds `limit` of them after the record
    /// `continuation` names, and a `continuation` when more follow. A zone with no records at all is listed on the
    /// page where it falls. `revision` changes with every write to the database, so a page need not be read again
    /// while it stays the same. A database that doesn't exist is not made: 404.
    private func page(of key: DatabaseKey, after continuation: String?, limit: Int, baseURL: String)
        async throws(ServerError) -> JSONValue
    {
        guard let handle = try await state.registry.existingHandle(for: key) else {
            throw ServerError(.notFound, "no database \(key): GET /emulator/v1/databases lists those that exist")
        }
        // Read before the records: a write while they are read leaves the page newer than its revision, never older.
        let revision = handle.revision
        let after = try continuation.map { (text) throws(ServerError) in try Self.position(text) }
        let (zones, last) = try await records(of: handle, after: after, limit: limit, baseURL: baseURL)
        var page: [String: JSONValue] = ["zones": zones, "revision": .int(Int64(revision))]
        if let last { page["continuation"] = .string(Self.marker(last)) }
        return .object(page)
    }

    /// The records of a database by zone, after `after`, at most `limit` of them, and the position of the last one
    /// when more follow. A database lists no records by itself, so each zone is read by the record types its schema
    /// knows, from the page's start on.
    private func records(
        of handle: DatabaseHandle, after: Position?, limit: Int, baseURL: String, embeddingAssets: Bool = false
    ) async throws(ServerError) -> (zones: JSONValue, continuation: Position?) {
        let key = handle.key
        var coding = state.coding(for: handle, baseURL: baseURL)
        coding.embedsAssetData = embeddingAssets
        let types = try await state.schema.schema(container: key.container, environment: key.environment).recordTypes
            .keys
            .sorted()
        let zones = try await RecordsEndpoint.call { try await handle.database.allRecordZones() }
        var result: [JSONValue] = []
        var count = 0
        var last: Position?
        var more = false
        for zone in zones.sorted(by: { $0.zoneName < $1.zoneName }) {
            if let after, zone.zoneName < after.zone { continue }
            // The zone the last page ended in has records, before the position.
            var zoneHasRecords = after?.zone == zone.zoneName
            var records: [CloudRecord] = []
            types: for type in types {
                if let after, zone.zoneName == after.zone, type < after.type { continue }
                let all = try await allRecords(ofType: type, in: zone, handle: handle)
                    .sorted { $0.id.recordName < $1.id.recordName }
                zoneHasRecords = zoneHasRecords || !all.isEmpty
                for record in all {
                    let position = Position(zone: zone.zoneName, type: type, name: record.id.recordName)
                    if let after, position <= after { continue }
                    guard count < limit else {
                        more = true
                        break types
                    }
                    records.append(record)
                    count += 1
                    last = position
                }
            }
            if !records.isEmpty || !zoneHasRecords {
                let outgoing = await coding.outgoing(records)
                result.append(["zoneID": coding.json(zone), "records": .array(outgoing.map { coding.json($0) })])
            }
            if more { break }
        }
        return (.array(result), more ? last : nil)
    }

    /// Every record of a type in a zone, read from the database a page at a time.
    private func allRecords(ofType type: String, in zone: CloudRecord.ZoneID, handle: DatabaseHandle)
        async throws(ServerError) -> [CloudRecord]
    {
        var records: [CloudRecord] = []
        var page = try await RecordsEndpoint.call {
            try await handle.database.records(
                matching: CloudQuery(recordType: type), inZoneWith: zone, desiredKeys: nil,
                resultsLimit: EmulatorState.internalReadPage)
        }
        while true {
            for (_, result) in page.matchResults {
                if case .success(let record) = result { records.append(record) }
            }
            guard let cursor = page.queryCursor else { return records }
            page = try await RecordsEndpoint.call {
                try await handle.database.records(
                    continuingMatchFrom: cursor, desiredKeys: nil, resultsLimit: EmulatorState.internalReadPage)
            }
        }
    }

    private static func marker(_ position: Position) -> String {
        ((try? JSONEncoder().encode(position)) ?? Data()).base64EncodedString()
    }

    private static func position(_ marker: String) throws(ServerError) -> Position {
        guard let data = Data(base64Encoded: marker),
            let position = try? JSONDecoder().decode(Position.self, from: data)
        else { throw .badRequest("the continuation isn't one this emulator gave: start again without one") }
        return position
    }

    /// A `limit` parameter: 1 to ``maximumPage``, `fallback` when absent.
    private static func limit(_ text: String?, default fallback: Int) throws(ServerError) -> Int {
        guard let text else { return fallback }
        guard let limit = Int(text), (1...maximumPage).contains(limit) else {
            throw .badRequest("limit must be 1 to \(maximumPage), got \(text)")
        }
        return limit
    }

    private func export(baseURL: String) async throws(ServerError) -> JSONValue {
        var databases: [JSONValue] = []
        for key in await state.registry.keys() {
            guard case .object(var members) = Self.json(key),
                let handle = try await state.registry.existingHandle(for: key)
            else { continue }
            members["zones"] = try await records(
                of: handle, after: nil, limit: .max, baseURL: baseURL, embeddingAssets: true
            ).zones
            members["subscriptions"] = .array(await handle.subscriptions.all.map(\.entry.subscription))
            databases.append(.object(members))
        }
        return ["databases": .array(databases)]
    }

    /// Saves what ``export()`` wrote: zones, records as they are (overwriting), subscriptions.
    private func importDatabases(_ body: JSONValue) async throws(ServerError) -> JSONValue {
        var imported = 0
        for database in body["databases"]?.array ?? [] {
            guard let container = database["container"]?.string,
                let scope = database["scope"]?.string.flatMap(DatabaseKey.Scope.init(rawValue:))
            else { throw .badRequest("each database needs container and scope") }
            let environment =
                database["environment"]?.string.flatMap(EmulatorEnvironment.init(rawValue:))
                ?? state.configuration.environment
            let key = DatabaseKey(
                container: container, environment: environment, scope: scope, user: database["user"]?.string)
            let handle = try await state.registry.handle(for: key)
            defer { handle.noteWrite() }
            var coding = state.coding(for: handle, baseURL: "")
            coding.embedsAssetData = true
            for zone in database["zones"]?.array ?? [] {
                let zoneID = try coding.zoneID(zone["zoneID"])
                if zoneID != .default {
                    _ = try await RecordsEndpoint.call {
                        try await handle.database.modifyRecordZones(saving: [zoneID], deleting: [])
                    }
                }
                var records: [CloudRecord] = []
                for wire in zone["records"]?.array ?? [] {
                    var record = try coding.record(wire, zone: zoneID, current: nil)
                    record.systemFields = nil
                    try await state.schema.check(record, key: key)
                    records.append(record)
                }
                // In requests of the size a client may send, as CloudKit would take them.
                let size = DatabaseRequest.maximumItems
                for start in stride(from: 0, to: records.count, by: size) {
                    let batch = Array(records[start..<min(start + size, records.count)])
                    let results = try await RecordsEndpoint.call {
                        try await handle.database.modifyRecords(
                            saving: batch, deleting: [], savePolicy: .allKeys, atomically: false)
                    }
                    for case .failure(let error) in results.saveResults.values { throw ServerError(error) }
                    imported += batch.count
                }
            }
            for subscription in database["subscriptions"]?.array ?? [] {
                guard let id = subscription["subscriptionID"]?.string else { continue }
                do {
                    try await handle.subscriptions.save(.init(subscription: subscription, owner: key.user), id: id)
                } catch {
                    throw error.serverError(id: id)
                }
            }
        }
        return ["importedRecords": .int(Int64(imported))]
    }

    // MARK: JSON

    static func json(_ key: DatabaseKey) -> JSONValue {
        var members: [String: JSONValue] = [
            "container": .string(key.container), "environment": .string(key.environment.rawValue),
            "scope": .string(key.scope.rawValue),
        ]
        if let user = key.user { members["user"] = .string(user) }
        return .object(members)
    }

    static func json<T: Encodable>(_ value: T) -> JSONValue {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(value), let json = try? JSONValue.parse(data) else { return .null }
        return json
    }
}
