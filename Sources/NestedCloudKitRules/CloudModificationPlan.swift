import Foundation
import NestedCloudKitCodable

/// What a modify request does under CloudKit's rules: the result of each item, and the writes and removals that
/// follow. A backend computes the plan from its `CloudRecordStore` and then applies it in one transaction.
///
/// The rules:
/// - Each item is a `CloudRecordOperation`: `update` and `replace` (`ifServerRecordUnchanged`) save only over
///   the version the client's change tag names, and fail for a record that no longer exists; `create` fails for a
///   record that exists; a `delete` with a change tag deletes only that version. The forced kinds check nothing.
///   An update keeps the server's fields the client doesn't send; a replace clears them.
/// - Each saved record gets a new change tag and modification date; its creation date and creator are kept.
/// - A record type can't change, and a reference can only point into its record's zone.
/// - A record holds at most 1 MB of field data (names and values; assets not counted), as stored after the save.
/// - A `.validate` reference must point to a record that exists after the request; a record that a `.validate`
///   reference still points to can't be deleted. At most 750 records may point to one target with `.deleteSelf`:
///   the records a request adds as holders are counted in request order, and those past the limit are refused.
/// - Deleting a record deletes, in turn, every record that points to it with `.deleteSelf`.
/// - Atomic requests are all or nothing within each custom zone; in the default zone each item stands alone.
/// - Shares and parents follow `ShareRules`.
package struct CloudModificationPlan: Sendable {
    /// The result of each record to save: the record as stored, or why it wasn't.
    package private(set) var saveResults: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
    /// The result of each record to delete.
    package private(set) var deleteResults: [CloudRecord.ID: Result<Void, CloudDatabaseError>] = [:]
    /// The records to store, with their new system fields, in request order.
    package private(set) var recordsToWrite: [CloudRecord] = []
    /// The records to remove: the deleted ones and everything their deletion cascades to.
    package private(set) var recordIDsToRemove: [CloudRecord.ID] = []

    /// The most records that may point to one target with `.deleteSelf`.
    package static let maximumDeleteSelfReferences = 750

    /// Why CloudKit would refuse a request of these items, or `nil`: it names a record more than once.
    package static func refusal(of operations: [CloudRecordOperation]) -> CloudDatabaseError? {
        CloudRequestRules.refusal(mentioning: operations.map(\.id))
    }

    /// Plans a modify request made of `CloudRecordOperation`s, the items of Web Services' `records/modify`; a
    /// `CloudDatabase` call's are `CloudRecordOperation/items(saving:deleting:savePolicy:)`.
    ///
    /// - Parameters:
    ///   - operations: The items, saves and deletions in any order; each kind of list keeps its order.
    ///   - atomically: Whether each custom zone's changes apply all together or not at all.
    ///   - store: The backend's current state.
    ///   - failures: Items the backend has already failed on its own; they count as failed items for atomic
    ///     requests, also when they aren't among `operations` (an item that couldn't be read).
    ///   - now: The time of the change, for the system fields; kept to the millisecond, as CloudKit keeps it.
    ///   - userRecordName: The user making the change; the owner of the shares they save.
    ///   - makeShareURL: The URL of a new share, from its short GUID.
    ///   - makeChangeTag: A new, unique change tag.
    /// - Throws: `CloudDatabaseError/invalidArguments(_:)` for a request that saves or deletes a record twice;
    ///   whatever the store throws.
    package init(
        _ operations: [CloudRecordOperation],
        atomically: Bool,
        store: some CloudRecordStore,
        failures: [CloudRecord.ID: CloudDatabaseError] = [:],
        now: Date,
        userRecordName: String = CloudRecord.ZoneID.currentUserOwnerName,
        makeShareURL: (_ shortGUID: String) -> URL? = ShareRules.iCloudURL(shortGUID:),
        makeChangeTag: () -> String
    ) throws {
        // Each save with its record, read out once, so planning it needs no case for a deletion.
        let saves = operations.compactMap { operation in operation.recordToSave.map { (operation, record: $0) } }
        let deletions = operations.filter { $0.recordToSave == nil }
        if let refusal = Self.refusal(of: operations) { throw refusal }
        let now = CloudValue.normalizedDate(now)
        var writes = try planSaves(
            saves, store: store, failures: failures, now: now, userRecordName: userRecordName,
            makeShareURL: makeShareURL, makeChangeTag: makeChangeTag)
        var removals = try planDeletions(deletions, store: store, failures: failures)
        let saveOrder = saves.map(\.record.id)
        let deleteOrder = deletions.map(\.id)
        try failReferenceViolations(
            saveOrder: saveOrder, deleteOrder: deleteOrder, writes: &writes, removals: &removals, store: store)
        try linkSharesToRoots(saveOrder: saveOrder, writes: &writes, removals: removals, store: store)
        if atomically {
            Self.rollBackFailedZones(
                writes: &writes, removals: &removals, saveResults: &saveResults, deleteResults: &deleteResults,
                failedElsewhere: failures.keys)
        }
        succeed(saveOrder: saveOrder, deleteOrder: deleteOrder, writes: writes, removals: removals)
        try unlinkDeletedShares(store: store, now: now, userRecordName: userRecordName, makeChangeTag: makeChangeTag)
    }

    /// Each save's record as it will be stored, by ID; the saves that can't be are failed in `saveResults`.
    private mutating func planSaves(
        _ saves: [(operation: CloudRecordOperation, record: CloudRecord)], store: some CloudRecordStore,
        failures: [CloudRecord.ID: CloudDatabaseError], now: Date, userRecordName: String,
        makeShareURL: (String) -> URL?, makeChangeTag: () -> String
    ) throws -> [CloudRecord.ID: CloudRecord] {
        var writes: [CloudRecord.ID: CloudRecord] = [:]
        for (operation, client) in saves {
            if let failure = failures[client.id] {
                saveResults[client.id] = .failure(failure)
                continue
            }
            switch try Self.save(
                client, as: operation, store: store, now: now, userRecordName: userRecordName,
                makeShareURL: makeShareURL, makeChangeTag: makeChangeTag)
            {
            case .success(let stored): writes[client.id] = stored
            case .failure(let error): saveResults[client.id] = .failure(error)
            }
        }
        return writes
    }

    /// What each deletion removes (the record and its `.deleteSelf` cascade), by ID; the deletions that can't
    /// happen are failed in `deleteResults`.
    private mutating func planDeletions(
        _ deletions: [CloudRecordOperation], store: some CloudRecordStore,
        failures: [CloudRecord.ID: CloudDatabaseError]
    ) throws -> [CloudRecord.ID: Set<CloudRecord.ID>] {
        var removals: [CloudRecord.ID: Set<CloudRecord.ID>] = [:]
        for operation in deletions {
            let id = operation.id
            if let failure = failures[id] {
                deleteResults[id] = .failure(failure)
                continue
            }
            if let missing = try store.missingZoneError(id.zoneID) {
                deleteResults[id] = .failure(missing)
                continue
            }
            guard let server = try store.record(withID: id) else {
                deleteResults[id] = .failure(.unknownItem(id))
                continue
            }
            if case .some(let changeTag) = operation.requiredChangeTag, server.systemFields?.changeTag != changeTag {
                // The client's copy is the server's record as of the tag it named.
                var client = server
                client.systemFields?.changeTag = changeTag
                deleteResults[id] = .failure(.serverRecordChanged(server: server, client: client, ancestor: nil))
                continue
            }
            var removed = try Self.cascade(from: id, store: store)
            // A shared root takes its share with it.
            for removedID in removed.sorted(by: { $0.recordName < $1.recordName }) {
                let record = removedID == id ? server : try store.record(withID: removedID)
                if let shareID = record?.systemFields?.shareID { removed.insert(shareID) }
            }
            removals[id] = removed
        }
        return removals
    }

    /// Gives each record share saved its root: the root must be saved in the same request when the share is new
    /// (as CloudKit asks), must exist, and mustn't have another share; it then gets the share's ID. A share that
    /// can't have its root fails.
    private mutating func linkSharesToRoots(
        saveOrder: [CloudRecord.ID], writes: inout [CloudRecord.ID: CloudRecord],
        removals: [CloudRecord.ID: Set<CloudRecord.ID>], store: some CloudRecordStore
    ) throws {
        let removed = removals.values.reduce(into: Set<CloudRecord.ID>()) { $0.formUnion($1) }
        for id in saveOrder {
            guard let share = writes[id], share.recordType == CloudShare.recordType else { continue }
            let isNew = try store.record(withID: id) == nil
            guard let rootID = share.shareContents?.rootRecordID else {
                if isNew, id.recordName != CloudShare.zoneWideRecordName {
                    saveResults[id] = .failure(
                        .invalidArguments(
                            "share \(id) can't be saved: it names no root record, and only a zone-wide share (named "
                                + "\(CloudShare.zoneWideRecordName)) shares its whole zone"))
                    writes[id] = nil
                }
                continue
            }
            let serverRoot = removed.contains(rootID) ? nil : try store.record(withID: rootID)
            let problem: String?
            if removed.contains(rootID) {
                problem = "its root record \(rootID) is deleted in the same request"
            } else if isNew, writes[rootID] == nil {
                problem =
                    "a new share is saved together with its root record, and \(rootID) isn't saved in this request "
                    + "(or its save failed)"
            } else if writes[rootID] == nil, serverRoot == nil {
                problem = "its root record \(rootID) doesn't exist"
            } else if let other = (writes[rootID] ?? serverRoot)?.systemFields?.shareID, other != id {
                problem = "its root record \(rootID) is already shared by \(other); a record has at most one share"
            } else {
                problem = nil
            }
            if let problem {
                saveResults[id] = .failure(.invalidArguments("share \(id) can't be saved: \(problem)"))
                writes[id] = nil
            } else if var root = writes[rootID] {
                root.systemFields?.shareID = id
                writes[rootID] = root
            }
        }
    }

    /// Takes the share ID off the roots of the shares this plan deletes, when the root stays: a new version of
    /// the root, as CloudKit's server writes one.
    private mutating func unlinkDeletedShares(
        store: some CloudRecordStore, now: Date, userRecordName: String, makeChangeTag: () -> String
    ) throws {
        let removed = Set(recordIDsToRemove)
        for shareID in recordIDsToRemove {
            guard let share = try store.record(withID: shareID), share.recordType == CloudShare.recordType,
                let rootID = share.shareContents?.rootRecordID, !removed.contains(rootID)
            else { continue }
            if let index = recordsToWrite.firstIndex(where: { $0.id == rootID }) {
                if recordsToWrite[index].systemFields?.shareID == shareID {
                    recordsToWrite[index].systemFields?.shareID = nil
                }
                continue
            }
            guard var root = try store.record(withID: rootID), root.systemFields?.shareID == shareID else { continue }
            root.systemFields?.shareID = nil
            root.systemFields?.changeTag = makeChangeTag()
            root.systemFields?.modificationDate = now
            root.systemFields?.lastModifiedUserRecordName = userRecordName
            recordsToWrite.append(root)
        }
    }

    /// Fails the saves and deletions that break a reference rule (the `.deleteSelf` limit, a `.validate` target
    /// that won't exist, a deleted target a `.validate` reference still points to). Each check depends on which
    /// other items succeed, so the checks repeat until no more items fail; each pass goes in request order, so
    /// that the same request always fails the same items.
    private mutating func failReferenceViolations(
        saveOrder: [CloudRecord.ID], deleteOrder: [CloudRecord.ID], writes: inout [CloudRecord.ID: CloudRecord],
        removals: inout [CloudRecord.ID: Set<CloudRecord.ID>], store: some CloudRecordStore
    ) throws {
        var changed = true
        while changed {
            changed = false
            let removed = removals.values.reduce(into: Set<CloudRecord.ID>()) { $0.formUnion($1) }
            for (id, violation) in try Self.deleteSelfLimitViolations(
                order: saveOrder, writes: writes, removed: removed, store: store)
            {
                saveResults[id] = .failure(violation)
                writes[id] = nil
                changed = true
            }
            for id in saveOrder {
                guard let record = writes[id] else { continue }
                if let violation = try Self.validateViolation(
                    of: record, writes: writes, removed: removed, store: store)
                {
                    saveResults[id] = .failure(violation)
                    writes[id] = nil
                    changed = true
                }
            }
            for id in deleteOrder {
                guard let cascade = removals[id] else { continue }
                if let holder = try Self.validatingHolder(of: cascade, writes: writes, removed: removed, store: store) {
                    deleteResults[id] = .failure(
                        .referenceViolation(id, reason: "\(holder) still points to it with a validate reference"))
                    removals[id] = nil
                    changed = true
                }
            }
        }
    }

    /// Records the items still planned as succeeded: the records to write in request order, and the records to
    /// remove, each once.
    private mutating func succeed(
        saveOrder: [CloudRecord.ID], deleteOrder: [CloudRecord.ID], writes: [CloudRecord.ID: CloudRecord],
        removals: [CloudRecord.ID: Set<CloudRecord.ID>]
    ) {
        for id in saveOrder {
            if let stored = writes[id] {
                saveResults[id] = .success(stored)
                recordsToWrite.append(stored)
            }
        }
        var removedIDs: Set<CloudRecord.ID> = []
        for id in deleteOrder {
            guard let cascade = removals[id] else { continue }
            deleteResults[id] = .success(())
            for removedID in cascade.sorted(by: { $0.recordName < $1.recordName })
            where removedIDs.insert(removedID).inserted {
                recordIDsToRemove.append(removedID)
            }
        }
    }

    /// The record `operation` saves as it will be stored, or why it can't be.
    private static func save(
        _ client: CloudRecord, as operation: CloudRecordOperation, store: some CloudRecordStore, now: Date,
        userRecordName: String, makeShareURL: (String) -> URL?, makeChangeTag: () -> String
    ) throws -> Result<CloudRecord, CloudDatabaseError> {
        if let refusal = CloudRequestRules.refusal(saving: client) { return .failure(refusal) }
        if let missing = try store.missingZoneError(client.id.zoneID) { return .failure(missing) }
        let server = try store.record(withID: client.id)
        if let server, server.recordType != client.recordType {
            return .failure(
                .invalidArguments(
                    "\(client.id) is a \(server.recordType) on the server and can't become a \(client.recordType)"))
        }
        if case .create = operation, let server {
            return .failure(.serverRecordChanged(server: server, client: client, ancestor: nil))
        }
        if case .some(let clientTag) = operation.requiredChangeTag {
            guard let server else { return .failure(.unknownItem(client.id)) }
            if server.systemFields?.changeTag != clientTag {
                let ancestor = try clientTag.flatMap { try store.ancestor(of: client.id, changeTag: $0) }
                return .failure(.serverRecordChanged(server: server, client: client, ancestor: ancestor))
            }
        }

        let fields = operation.storedFields(over: server)
        let systemFields = CloudRecord.SystemFields(
            changeTag: makeChangeTag(),
            creationDate: server?.systemFields?.creationDate ?? now,
            creatorUserRecordName: server?.systemFields?.creatorUserRecordName ?? userRecordName,
            modificationDate: now,
            lastModifiedUserRecordName: userRecordName,
            // Set by the server only: when a share of this root is saved.
            shareID: server?.systemFields?.shareID
        )
        var stored = CloudRecord(
            recordType: client.recordType, id: client.id, fields: fields, systemFields: systemFields)
        stored.parentID = client.parentID
        if client.recordType == CloudShare.recordType {
            stored.shareContents = ShareRules.storedContents(
                client: client.shareContents, server: server?.shareContents, savedBy: userRecordName,
                makeShortGUID: ShareRules.makeShortGUID, makeURL: makeShareURL)
        }
        // Fields kept from the server stay encrypted; names of fields no longer there are ignored.
        stored.setEncrypted(true, fieldsNamed: client.encryptedFieldNames.union(server?.encryptedFieldNames ?? []))
        // CloudKit's framework answers a record too large with `limitExceeded` for that record.
        if CloudRequestRules.fieldDataSize(of: stored) > CloudRequestRules.maximumRecordSize {
            return .failure(.limitExceeded(limit: nil, requested: nil))
        }
        return .success(stored)
    }

    /// The record and every record that points to it with `.deleteSelf`, in turn.
    private static func cascade(from id: CloudRecord.ID, store: some CloudRecordStore) throws -> Set<CloudRecord.ID> {
        var removed: Set<CloudRecord.ID> = []
        try DeleteSelfCascade.walk(from: [id], holders: store.referenceHolders(of:)) { reached in
            removed.insert(reached)
            return .descend
        }
        return removed
    }

    /// Why a record to save breaks the `.validate` rule, or `nil`: a validate reference to a record that won't exist.
    private static func validateViolation(
        of record: CloudRecord, writes: [CloudRecord.ID: CloudRecord], removed: Set<CloudRecord.ID>,
        store: some CloudRecordStore
    ) throws -> CloudDatabaseError? {
        for (_, value) in record.fields {
            for reference in value.references where reference.action == .validate {
                let exists =
                    try writes[reference.recordID] != nil
                    || (!removed.contains(reference.recordID) && store.record(withID: reference.recordID) != nil)
                if !exists {
                    return .referenceViolation(
                        record.id, reason: "its validate reference points to \(reference.recordID), which doesn't exist"
                    )
                }
            }
        }
        return nil
    }

    /// The records to save that would take a target past `maximumDeleteSelfReferences` records pointing to it
    /// with `.deleteSelf`, in request order: the records the request adds as holders are admitted one by one, and the
    /// first one past the limit, and every later one, is refused.
    ///
    /// A target's holders are its stored holders that stay (neither removed nor saved without the reference) and
    /// the new holders admitted so far. A stored holder saved again with its reference keeps its place: it adds no
    /// holder. A record refused here counts for nothing, so it can't push a later record over.
    private static func deleteSelfLimitViolations(
        order: [CloudRecord.ID], writes: [CloudRecord.ID: CloudRecord], removed: Set<CloudRecord.ID>,
        store: some CloudRecordStore
    ) throws -> [(CloudRecord.ID, CloudDatabaseError)] {
        var staying: [CloudRecord.ID: Set<CloudRecord.ID>] = [:]
        func stayingHolders(of target: CloudRecord.ID) throws -> Set<CloudRecord.ID> {
            if let known = staying[target] { return known }
            var holders: Set<CloudRecord.ID> = []
            for (holder, action) in try store.referenceHolders(of: target)
            where action == .deleteSelf && !removed.contains(holder) {
                if let rewritten = writes[holder], !rewritten.references(target, withAction: .deleteSelf) { continue }
                holders.insert(holder)
            }
            staying[target] = holders
            return holders
        }
        var admitted: [CloudRecord.ID: Int] = [:]
        var violations: [(CloudRecord.ID, CloudDatabaseError)] = []
        for id in order {
            guard let record = writes[id] else { continue }
            let targets = DeleteSelfCascade.targets(of: record)
            var newTargets: [CloudRecord.ID] = []
            var violation: CloudDatabaseError?
            for target in targets {
                let holders = try stayingHolders(of: target)
                if holders.contains(id) { continue }
                let count = holders.count + admitted[target, default: 0] + 1
                if count > maximumDeleteSelfReferences {
                    violation = .referenceViolation(
                        id,
                        reason:
                            "\(count) records would point to \(target) with deleteSelf; CloudKit allows \(maximumDeleteSelfReferences)"
                    )
                    break
                }
                newTargets.append(target)
            }
            if let violation {
                violations.append((id, violation))
            } else {
                for target in newTargets { admitted[target, default: 0] += 1 }
            }
        }
        return violations
    }

    /// A record, not itself going away, that points into a delete's cascade with `.validate`; `nil` if none.
    private static func validatingHolder(
        of cascade: Set<CloudRecord.ID>, writes: [CloudRecord.ID: CloudRecord], removed: Set<CloudRecord.ID>,
        store: some CloudRecordStore
    ) throws -> CloudRecord.ID? {
        for target in cascade.sorted(by: { $0.recordName < $1.recordName }) {
            for (holder, action) in try store.referenceHolders(of: target).sorted(by: {
                $0.holder.recordName < $1.holder.recordName
            })
            where action == .validate && !removed.contains(holder) {
                // A holder saved in the same request is judged by its new fields.
                if let rewritten = writes[holder], !rewritten.references(target, withAction: .validate) { continue }
                return holder
            }
        }
        return nil
    }

    /// In each custom zone where an item of an atomic request failed, nothing else applies either; the items the
    /// backend failed before planning count too.
    private static func rollBackFailedZones(
        writes: inout [CloudRecord.ID: CloudRecord], removals: inout [CloudRecord.ID: Set<CloudRecord.ID>],
        saveResults: inout [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>],
        deleteResults: inout [CloudRecord.ID: Result<Void, CloudDatabaseError>],
        failedElsewhere: some Sequence<CloudRecord.ID>
    ) {
        let failures = AtomicZoneFailures(failed: Array(saveResults.keys) + Array(deleteResults.keys) + failedElsewhere)
        failures.fail(&writes, results: &saveResults)
        failures.fail(&removals, results: &deleteResults)
    }
}

extension CloudRecord {
    /// Whether a field of this record points to the target with the given action.
    func references(_ target: CloudRecord.ID, withAction action: CloudReference.Action) -> Bool {
        fields.contains { field in field.value.references.contains { $0.recordID == target && $0.action == action } }
    }
}
