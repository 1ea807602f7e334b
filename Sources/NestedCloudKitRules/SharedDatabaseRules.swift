import Foundation
import NestedCloudKitCodable

/// CloudKit's rules for a user's shared database, for a backend that keeps several users' databases: who sees
/// which of an owner's records, and what a request made in a participant's shared database may change in the
/// owner's. The in-memory and SQLite servers both apply them, so both refuse and show exactly the same.
///
/// The owner's database holds the one copy of each record. A participant's shared database shows what the shares
/// they accepted cover, under the owner's zone names (`CloudRecord/ZoneID/sharedName(ownedBy:)`).
package enum SharedDatabaseRules {
    /// Whether `user` joined this share: an accepted participant, not its owner.
    package static func hasAccepted(_ share: CloudRecord, _ user: String) -> Bool {
        share.shareContents?.participants.contains {
            $0.userRecordName == user && $0.role != .owner && $0.acceptanceStatus == .accepted
        } == true
    }

    /// The users who accepted one of these shares, other than their owner: those whose shared database shows
    /// what the shares cover.
    package static func participants(of shares: [CloudRecord]) -> Set<String> {
        Set(
            shares.flatMap { share in
                (share.shareContents?.participants ?? []).compactMap { participant in
                    participant.role != .owner && participant.acceptanceStatus == .accepted
                        ? participant.userRecordName : nil
                }
            })
    }

    /// A request made in `user`'s shared database, as it applies to one owner's database: the items to plan, what
    /// refuses some of them, and the shares that deleting leaves.
    package struct OwnerRequest {
        /// The items, named as the owner stores them, in the request's order; shares being left aren't among them.
        package var operations: [CloudRecordOperation] = []
        /// Items refused before planning, by the owner's IDs: the request's own failures, zones the user doesn't
        /// see, and writes the shares don't allow.
        package var refusals: [CloudRecord.ID: CloudDatabaseError] = [:]
        /// Shares the user joined and deletes: they leave them (`ShareAccess/leaving(_:by:)`).
        package var sharesLeft: [CloudRecord.ID] = []

        /// Checks the items of a request in `user`'s shared database that go to `owner`'s zones.
        ///
        /// - Parameters:
        ///   - operations: The items, named as the user names them (in the owner's zones).
        ///   - failures: Failures the request already carries (injected faults, unreadable asset files), by the
        ///     user's IDs.
        ///   - shownZones: The zones the user's shared database shows.
        ///   - store: The owner's records.
        ///   - shares: The share records of one of the owner's zones (by the owner's name).
        package init(
            _ operations: [CloudRecordOperation], by user: String, to owner: String,
            failing failures: [CloudRecord.ID: CloudDatabaseError], shownZones: Set<CloudRecord.ZoneID>,
            store: some CloudRecordStore, shares: (CloudRecord.ZoneID) throws -> [CloudRecord]
        ) throws {
            let toOwner = { (zone: CloudRecord.ZoneID) in zone.ownersName(ownedBy: owner) }
            let toShared = { (zone: CloudRecord.ZoneID) in zone.sharedName(ownedBy: owner) }
            var toCheck: [CloudRecordOperation] = []
            var created: [CloudRecord.ID: CloudRecord] = [:]
            for operation in operations.map({ $0.movingZones(toOwner) }) {
                let id = operation.id
                let stored = try store.record(withID: id)
                if let failure = failures[id.movingZone(toShared)] { refusals[id] = failure.movingZones(toOwner) }
                if !shownZones.contains(id.zoneID.sharedName(ownedBy: owner)) || owner == user {
                    refusals[id] = refusals[id] ?? .zoneNotFound(id.zoneID)
                } else if refusals[id] == nil, operation.recordToSave == nil, let share = stored,
                    SharedDatabaseRules.hasAccepted(share, user)
                {
                    // A participant deleting a share they joined leaves it; any other change to a share is the
                    // owner's, refused below.
                    sharesLeft.append(id)
                    continue
                } else if refusals[id] == nil {
                    toCheck.append(operation)
                }
                if let record = operation.recordToSave, stored == nil, created[id] == nil { created[id] = record }
                self.operations.append(operation)
            }
            // A new child's new parent, saved in the same request, leads to the share as a stored one would, unless
            // the parent's own save is refused: checked again until no refusal uncovers another.
            var permissionRefusals: [CloudRecord.ID: CloudDatabaseError] = [:]
            var sharesByZone: [CloudRecord.ZoneID: [CloudRecord]] = [:]
            var refusedMore = true
            while refusedMore {
                refusedMore = false
                let batch = created.filter { refusals[$0.key] == nil && permissionRefusals[$0.key] == nil }
                for operation in toCheck where permissionRefusals[operation.id] == nil {
                    let zone = operation.id.zoneID
                    if sharesByZone[zone] == nil { sharesByZone[zone] = try shares(zone) }
                    let refusal = try Self.refusal(
                        of: operation, by: user, named: operation.id.movingZone(toShared), in: store,
                        shares: sharesByZone[zone] ?? [], batch: batch)
                    if let refusal {
                        permissionRefusals[operation.id] = refusal
                        refusedMore = true
                    }
                }
            }
            refusals.merge(permissionRefusals) { earlier, _ in earlier }
        }

        /// The owner's answer, named as the user names it; the shares left succeed.
        package func sharedResults(_ results: CloudModifyResults, ownedBy owner: String) -> CloudModifyResults {
            let toShared = { (zone: CloudRecord.ZoneID) in zone.sharedName(ownedBy: owner) }
            var saveResults: [CloudRecord.ID: Result<CloudRecord, CloudDatabaseError>] = [:]
            var deleteResults: [CloudRecord.ID: Result<Void, CloudDatabaseError>] = [:]
            for (id, result) in results.saveResults {
                saveResults[id.movingZone(toShared)] = result.map { $0.movingZones(toShared) }
                    .mapError { $0.movingZones(toShared) }
            }
            for (id, result) in results.deleteResults {
                deleteResults[id.movingZone(toShared)] = result.mapError { $0.movingZones(toShared) }
            }
            for id in sharesLeft { deleteResults[id.movingZone(toShared)] = .success(()) }
            return (saveResults, deleteResults)
        }

        /// Why the shares `user` accepted don't let them make this change to the owner's record, or `nil` when
        /// they do.
        ///
        /// - Parameter shownID: The record's ID as the user names it, for the messages.
        private static func refusal(
            of operation: CloudRecordOperation, by user: String, named shownID: CloudRecord.ID,
            in store: some CloudRecordStore, shares: [CloudRecord], batch: [CloudRecord.ID: CloudRecord]
        ) throws -> CloudDatabaseError? {
            let id = operation.id
            let stored = try store.record(withID: id)
            if stored?.recordType == CloudShare.recordType
                || operation.recordToSave?.recordType == CloudShare.recordType
            {
                return .permissionFailure(
                    "\(user) can't save share \(shownID): only its owner changes a share's participants and "
                        + "permissions; a participant leaves a share by deleting it from their shared database")
            }
            let permission: CloudShare.Permission?
            if let record = operation.recordToSave {
                permission = try ShareAccess.permission(
                    of: user, forSaving: record, in: store, shares: shares, batch: batch)
            } else if stored != nil {
                permission = try ShareAccess.permission(of: user, on: id, in: store, shares: shares)
            } else {
                return .unknownItem(id)
            }
            switch permission {
            case .readWrite?:
                return nil
            case .readOnly?, CloudShare.Permission.none?:
                return .permissionFailure(
                    "\(user) has read-only access to \(shownID) through the share: ask its owner for read-write "
                        + "permission")
            case nil where stored == nil:
                return .permissionFailure(
                    "new record \(shownID) isn't in a hierarchy shared with \(user): set its parent to a shared "
                        + "record, so that the share covers it")
            case nil:
                // The record exists, but no share the user accepted covers it: they can't know of it.
                return operation.recordToSave == nil
                    ? .unknownItem(id)
                    : .permissionFailure("\(user) can't write \(shownID): no share they accepted covers it")
            }
        }
    }

    /// Why `user` can't create a zone in their shared database.
    package static func zoneCreationRefusal(_ zone: CloudRecord.ZoneID, by user: String) -> CloudDatabaseError {
        .permissionFailure(
            "zone \(zone) can't be created in the shared database, which shows only the zones others share with "
                + "\(user): create it in the private database and share it from there")
    }

    /// Why `user`'s shared database doesn't take this subscription to one of its zones: CloudKit's shared database
    /// takes database subscriptions only, as its zones come and go with shares.
    package static func zoneSubscriptionRefusal(_ subscription: CloudSubscription) -> CloudDatabaseError {
        .invalidArguments(
            "subscription \(subscription.id) watches a zone of the shared database, which takes database "
                + "subscriptions only: subscribe to the whole shared database instead")
    }

    /// Why the short GUID names no share.
    package static func unknownShortGUID(_ shortGUID: String) -> CloudDatabaseError {
        .invalidArguments(
            "no share has the short GUID \(shortGUID): check the share's URL, or ask its owner for it again")
    }
}
