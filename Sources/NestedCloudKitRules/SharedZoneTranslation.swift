import Foundation
import NestedCloudKitCodable

// A zone shared with another user has two names. Its owner stores it as their own (`__defaultOwner__`, the
// current user); the users it is shared with see it in their shared database under the owner's user record name,
// as CloudKit names it. A backend with several users keeps one copy, the owner's, and moves every ID a record,
// an operation or an error holds between the two names on the way in and out of the shared database.

extension CloudRecord.ZoneID {
    /// The zone as the users it is shared with see it: owned by `owner` rather than by the current user.
    package func sharedName(ownedBy owner: String) -> CloudRecord.ZoneID {
        ownerName == Self.currentUserOwnerName ? CloudRecord.ZoneID(zoneName: zoneName, ownerName: owner) : self
    }

    /// A shared zone as its owner stores it: owned by the current user.
    package func ownersName(ownedBy owner: String) -> CloudRecord.ZoneID {
        ownerName == owner ? CloudRecord.ZoneID(zoneName: zoneName, ownerName: Self.currentUserOwnerName) : self
    }
}

extension CloudRecord.ID {
    /// The same record name in the zone `move` gives.
    package func movingZone(_ move: (CloudRecord.ZoneID) -> CloudRecord.ZoneID) -> CloudRecord.ID {
        CloudRecord.ID(recordName: recordName, zoneID: move(zoneID))
    }
}

extension CloudRecord {
    /// The record with every ID it holds moved to the zone `move` gives: its own, its references', its parent's,
    /// its share's and, for a share, its root's.
    package func movingZones(_ move: (CloudRecord.ZoneID) -> CloudRecord.ZoneID) -> CloudRecord {
        var moved = self
        moved.id = id.movingZone(move)
        moved.parentID = parentID?.movingZone(move)
        if let shareID = systemFields?.shareID { moved.systemFields?.shareID = shareID.movingZone(move) }
        if let root = shareContents?.rootRecordID { moved.shareContents?.rootRecordID = root.movingZone(move) }
        guard hasReferences else { return moved }
        func moving(_ reference: CloudReference) -> CloudReference {
            CloudReference(recordID: reference.recordID.movingZone(move), action: reference.action)
        }
        for (name, value) in fields {
            switch value {
            case .reference(let reference): moved.fields[name] = .reference(moving(reference))
            case .referenceList(let references): moved.fields[name] = .referenceList(references.map(moving))
            default: continue
            }
        }
        return moved
    }
}

extension AssetKey {
    /// The same asset of the record named in the zone `move` gives.
    package func movingZone(_ move: (CloudRecord.ZoneID) -> CloudRecord.ZoneID) -> AssetKey {
        AssetKey(recordID: recordID.movingZone(move), field: field, position: position)
    }
}

extension CloudRecordOperation {
    /// The item with its record, or the ID it deletes, moved to the zone `move` gives.
    package func movingZones(_ move: (CloudRecord.ZoneID) -> CloudRecord.ZoneID) -> CloudRecordOperation {
        switch self {
        case .delete(let id, let changeTag): .delete(id.movingZone(move), changeTag: changeTag)
        case .forceDelete(let id): .forceDelete(id.movingZone(move))
        case .create, .update, .forceUpdate, .replace, .forceReplace: mappingRecord { $0.movingZones(move) }
        }
    }
}

extension CloudDatabaseError {
    /// The error with every record, record ID and zone ID it holds moved to the zone `move` gives, so that a
    /// conflict in a shared zone shows the records as the user who made the request names them.
    package func movingZones(_ move: (CloudRecord.ZoneID) -> CloudRecord.ZoneID) -> CloudDatabaseError {
        CloudDatabaseError(movingKind(move), underlying: underlyingError)
    }

    private func movingKind(_ move: (CloudRecord.ZoneID) -> CloudRecord.ZoneID) -> Kind {
        switch kind {
        case .unknownItem(let id): .unknownItem(id.movingZone(move))
        case .serverRecordChanged(let server, let client, let ancestor):
            .serverRecordChanged(
                server: server.movingZones(move), client: client.movingZones(move),
                ancestor: ancestor?.movingZones(move))
        case .partialFailure(let failures):
            .partialFailure(
                Dictionary(
                    failures.map { ($0.key.movingZone(move), $0.value.movingZones(move)) },
                    uniquingKeysWith: { first, _ in first }))
        case .zoneNotFound(let zone): .zoneNotFound(move(zone))
        case .userDeletedZone(let zone): .userDeletedZone(move(zone))
        case .encryptedDataReset(let zone): .encryptedDataReset(move(zone))
        case .changeTokenExpired(let zone): .changeTokenExpired(zone.map(move))
        case .referenceViolation(let id, let reason): .referenceViolation(id.movingZone(move), reason: reason)
        case .batchRequestFailed(let id): .batchRequestFailed(id.movingZone(move))
        case .limitExceeded, .invalidArguments, .requestRateLimited, .serviceUnavailable, .networkFailure,
            .serverResponseLost, .accountTemporarilyUnavailable, .operationCancelled, .quotaExceeded,
            .permissionFailure, .notAuthenticated, .internalError:
            kind
        }
    }
}
