import NestedCloudKitCodable

/// Both sides of a conflict, without the engine's own fields.
struct ConflictSides: Sendable {
    var server: CloudRecord
    var serverEditTime: Int64?
    var serverFieldTimes: [String: Int64]
    var local: StoredRecord
    var ancestor: CloudRecord?

    init(server: CloudRecord, local: StoredRecord) {
        let split = SyncMetadataFields.split(server)
        self.server = split.record
        serverEditTime = split.editTime
        serverFieldTimes = split.fieldTimes
        self.local = local
        ancestor = local.ancestor.map { SyncMetadataFields.split($0).record }
    }
}

/// A resolved conflict: the record to keep locally (on the server's system fields) and whether it must be uploaded.
struct ConflictOutcome: Sendable {
    var record: CloudRecord
    var editTime: Int64
    var fieldTimes: [String: Int64]
    var decision: ConflictResolution.Decision
    /// Whether the kept record differs from the server's, so it must be uploaded.
    var needsUpload: Bool
}

/// Applies a ``ConflictPolicy``. Pure apart from a custom policy's closure.
enum ConflictResolver {
    static func resolve(_ sides: ConflictSides, policy: ConflictPolicy) async throws -> ConflictOutcome {
        switch policy {
        case .serverWins:
            return keepServer(sides)
        case .clientWins:
            return keepClient(sides)
        case .newestEditWins:
            return sides.local.editTime > (sides.serverEditTime ?? Int64.min) ? keepClient(sides) : keepServer(sides)
        case .fieldByField:
            return mergeFields(sides)
        case .custom(let decide):
            let conflict = SyncConflict(
                server: sides.server, client: sides.local.record, ancestor: sides.ancestor,
                locallyChangedKeys: changedKeys(from: sides.ancestor, to: sides.local.record),
                serverChangedKeys: changedKeys(from: sides.ancestor, to: sides.server))
            let resolution: SyncConflict.Resolution
            do {
                resolution = try await decide(conflict)
            } catch {
                throw SyncError.conflictPolicyFailed(sides.server.id, underlying: error)
            }
            switch resolution {
            case .keepServer: return keepServer(sides)
            case .keepClient: return keepClient(sides)
            case .merged(let merged):
                var outcome = withFields(merged.fields, parent: merged.parentID, sides, decision: .keptClient)
                let fromClient = SyncStore.changedFieldNames(from: sides.server, to: outcome.record)
                outcome.decision = .merged(
                    fromServer: sides.server.fields.names.filter { !fromClient.contains($0) }, fromClient: fromClient)
                return outcome
            }
        }
    }

    static func keepServer(_ sides: ConflictSides) -> ConflictOutcome {
        ConflictOutcome(
            record: sides.server, editTime: sides.serverEditTime ?? sides.local.editTime,
            fieldTimes: sides.serverFieldTimes, decision: .keptServer, needsUpload: false)
    }

    /// The client's changes over the server's record: the fields it changed or cleared since the ancestor, and its
    /// parent if it moved it; whatever it never changed stays the server's, among them the fields a newer version of
    /// the app added, which an older one's record holds at the values it fetched. Without an ancestor (a record the
    /// server got from another device meanwhile), every field the client holds, over the server's.
    static func keepClient(_ sides: ConflictSides) -> ConflictOutcome {
        let client = sides.local.record
        let base = sides.ancestor ?? CloudRecord(recordType: client.recordType, id: client.id)
        let merged = RecordEdits(from: base, to: client).applied(from: client, to: sides.server)
        var outcome = withFields(merged.fields, parent: merged.parentID, sides, decision: .keptClient)
        outcome.record.setEncrypted(true, fieldsNamed: merged.encryptedFieldNames)
        return outcome
    }

    /// The server's record with other fields and parent: every field of the server's the fields don't hold is
    /// cleared.
    private static func withFields(
        _ fields: CloudRecord.Fields, parent: CloudRecord.ID?, _ sides: ConflictSides,
        decision: ConflictResolution.Decision
    ) -> ConflictOutcome {
        var record = sides.server
        record.fields = fields
        record.parentID = parent
        record.clearedFieldNames = []
        let needsUpload = !RecordEdits(from: sides.server, to: record).isEmpty
        return ConflictOutcome(
            record: record, editTime: max(sides.local.editTime, sides.serverEditTime ?? Int64.min),
            fieldTimes: newest(sides.local.fieldEditTimes, sides.serverFieldTimes), decision: decision,
            needsUpload: needsUpload)
    }

    /// Three-way and field by field: one-sided changes merge; a field both sides changed keeps the newer edit.
    static func mergeFields(_ sides: ConflictSides) -> ConflictOutcome {
        let server = sides.server
        let client = sides.local.record
        let ancestor = sides.ancestor
        var names: [String] = []
        var seen: Set<String> = []
        for name in server.fields.names + client.fields.names + (ancestor?.fields.names ?? [])
        where seen.insert(name).inserted {
            names.append(name)
        }
        var merged = CloudRecord.Fields()
        var fromServer: [String] = []
        var fromClient: [String] = []
        for name in names {
            let serverValue = server[name]
            let clientValue = client[name]
            let takeClient: Bool
            if serverValue == clientValue {
                takeClient = false
            } else if let ancestor, clientValue == ancestor[name] {
                takeClient = false
            } else if let ancestor, serverValue == ancestor[name] {
                takeClient = true
            } else {
                let clientTime = sides.local.fieldEditTimes[name] ?? sides.local.editTime
                let serverTime = sides.serverFieldTimes[name] ?? sides.serverEditTime ?? Int64.min
                takeClient = clientTime > serverTime
            }
            let value = takeClient ? clientValue : serverValue
            if serverValue != clientValue { takeClient ? fromClient.append(name) : fromServer.append(name) }
            if let value { merged[name] = value }
        }
        var outcome = withFields(
            merged, parent: mergedParent(sides), sides,
            decision: .merged(fromServer: fromServer, fromClient: fromClient))
        if fromClient.isEmpty { outcome.decision = .keptServer }
        if fromServer.isEmpty, !fromClient.isEmpty { outcome.decision = .keptClient }
        return outcome
    }

    /// The parent a field-by-field merge keeps, by the rule of a field: a move one side made wins, and when both
    /// moved the record, the newer move (the time of the field that names the parent) does. A record's parent
    /// decides who a share reaches, so a move out of a shared list survives a conflict as the field that made it.
    static func mergedParent(_ sides: ConflictSides) -> CloudRecord.ID? {
        let (server, client) = (sides.server.parentID, sides.local.record.parentID)
        if server == client { return server }
        if let ancestor = sides.ancestor {
            if client == ancestor.parentID { return server }
            if server == ancestor.parentID { return client }
        }
        let clientField = sides.local.record.parentFieldName ?? sides.ancestor?.parentFieldName
        let serverField = sides.server.parentFieldName ?? clientField
        let clientTime = clientField.flatMap { sides.local.fieldEditTimes[$0] } ?? sides.local.editTime
        let serverTime =
            serverField.flatMap { sides.serverFieldTimes[$0] } ?? sides.serverEditTime ?? Int64.min
        return clientTime > serverTime ? client : server
    }

    static func changedKeys(from ancestor: CloudRecord?, to record: CloudRecord) -> [String] {
        guard let ancestor else { return record.fields.names }
        return SyncStore.changedFieldNames(from: ancestor, to: record)
    }

    private static func newest(_ lhs: [String: Int64], _ rhs: [String: Int64]) -> [String: Int64] {
        lhs.merging(rhs) { max($0, $1) }
    }
}
