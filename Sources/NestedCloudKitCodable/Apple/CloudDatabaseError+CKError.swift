#if canImport(CloudKit)
import CloudKit
import Foundation

extension CloudDatabaseError {
    /// The portable form of an error from CloudKit's framework.
    ///
    /// - Parameters:
    ///   - error: The error; a `CKError` maps code for code, a ``CloudDatabaseError`` stays itself, Swift's
    ///     `CancellationError` becomes ``operationCancelled`` (``CloudKitDatabase`` rethrows a cancelled task's
    ///     `CancellationError` instead), and anything else is an ``internalError(_:)`` naming it.
    ///   - recordID: The record the error is about, for an item's error.
    ///   - zoneID: The zone of the request, for a request's error: errors about a zone name it.
    public init(_ error: any Error, recordID: CloudRecord.ID? = nil, zoneID: CloudRecord.ZoneID? = nil) {
        self.init(error, recordID: recordID, zoneID: zoneID, requestedItems: nil, client: nil)
    }

    /// The portable form of an error from CloudKit's framework, with what the bridge knows of the request.
    ///
    /// - Parameters:
    ///   - requestedItems: The items of the request, for a request's `limitExceeded` (CloudKit names no numbers).
    ///   - client: The record as the caller gave it, for a conflict: CloudKit's copy of it has lost its in-memory
    ///     assets and encrypted-field marks.
    init(
        _ error: any Error, recordID: CloudRecord.ID?, zoneID: CloudRecord.ZoneID?, requestedItems: Int?,
        client: CloudRecord?, clients: [CloudRecord.ID: CloudRecord] = [:]
    ) {
        switch error {
        case let error as CloudDatabaseError:
            self = error
        case let error as CKRecordConversionError:
            if error.code == .temporaryFileNotWritable {
                self = .internalError(error.description)
            } else {
                self = .invalidArguments(error.description)
            }
        case is CancellationError:
            self = .operationCancelled
        case let error as CKError:
            // The CKError itself stays underneath, for what the mapping leaves out (its userInfo, say).
            let mapped = Self.mapping(
                error, recordID: recordID, zoneID: zoneID, requestedItems: requestedItems,
                client: client ?? recordID.flatMap { clients[$0] }, clients: clients)
            self = CloudDatabaseError(mapped.kind, underlying: error)
        default:
            self = .internalError("CloudKit's framework failed with \(type(of: error)): \(error)", underlying: error)
        }
    }

    private static func mapping(
        _ error: CKError, recordID: CloudRecord.ID?, zoneID: CloudRecord.ZoneID?, requestedItems: Int?,
        client: CloudRecord?, clients: [CloudRecord.ID: CloudRecord]
    ) -> CloudDatabaseError {
        let zone = recordID?.zoneID ?? zoneID ?? .default
        let text = "\(error.localizedDescription) (CKError code \(error.code.rawValue))"
        switch error.code {
        case .unknownItem:
            if let recordID { return .unknownItem(recordID) }
            return .invalidArguments("CloudKit reports an item that doesn't exist, without naming it: \(text)")
        case .serverRecordChanged:
            return conflict(error, recordID: recordID, client: client)
        case .limitExceeded:
            // CloudKit names neither its limit (items and bytes) nor the request's size; the request's item count
            // is known here, an item's own size isn't.
            return .limitExceeded(limit: nil, requested: recordID == nil ? requestedItems : nil)
        case .partialFailure:
            var failures: [CloudRecord.ID: CloudDatabaseError] = [:]
            for (key, itemError) in error.partialErrorsByItemID ?? [:] {
                guard let itemID = key.base as? CKRecord.ID else { continue }
                let id = CloudRecord.ID(itemID)
                failures[id] = CloudDatabaseError(
                    itemError, recordID: id, zoneID: id.zoneID, requestedItems: nil,
                    client: clients[id], clients: clients)
            }
            return .partialFailure(failures)
        case .zoneNotFound:
            // CloudKit adds this key when the zone went away because the user reset their encrypted data.
            let value = error.userInfo[CKErrorUserDidResetEncryptedDataKey]
            let reset = (value as? NSNumber)?.boolValue ?? (value as? Bool) ?? false
            return reset ? .encryptedDataReset(zone) : .zoneNotFound(zone)
        case .userDeletedZone: return .userDeletedZone(zone)
        case .changeTokenExpired: return .changeTokenExpired(recordID?.zoneID ?? zoneID)
        case .requestRateLimited: return .requestRateLimited(retryAfter: error.retryAfterSeconds ?? 1)
        case .serviceUnavailable, .zoneBusy: return .serviceUnavailable(retryAfter: error.retryAfterSeconds)
        case .networkFailure, .networkUnavailable: return .networkFailure(text)
        case .serverResponseLost: return .serverResponseLost
        case .accountTemporarilyUnavailable: return .accountTemporarilyUnavailable
        case .operationCancelled: return .operationCancelled
        case .batchRequestFailed:
            if let recordID { return .batchRequestFailed(recordID) }
            return .invalidArguments("another item of the atomic request failed: \(text)")
        case .referenceViolation:
            if let recordID { return .referenceViolation(recordID, reason: text) }
            return .invalidArguments("a reference action refused the change: \(text)")
        case .invalidArguments, .constraintViolation, .badDatabase, .alreadyShared, .tooManyParticipants:
            return .invalidArguments(text)
        case .assetFileNotFound:
            return .invalidArguments("an asset's file doesn't exist: \(text)")
        case .assetFileModified:
            return .invalidArguments("an asset's file changed while it was being saved; save again: \(text)")
        case .quotaExceeded: return .quotaExceeded
        case .permissionFailure, .missingEntitlement, .badContainer, .managedAccountRestricted,
            .participantMayNeedVerification:
            return .permissionFailure(text)
        case .notAuthenticated: return .notAuthenticated
        case .incompatibleVersion:
            return .permissionFailure(
                "CloudKit no longer accepts this version of the app; the user must update it: \(text)")
        default:
            // internalError, serverRejectedRequest, resultsTruncated, assetNotAvailable, and codes newer than
            // this version.
            return .internalError(text)
        }
    }

    /// A conflict, with the server's record, the client's (as the caller gave it, when known) and the ancestor.
    /// Converting CloudKit's records can't fail on their assets (CloudKit doesn't download the server record's
    /// assets: they become assets without contents), only on a value CloudKit doesn't store.
    private static func conflict(_ error: CKError, recordID: CloudRecord.ID?, client: CloudRecord?)
        -> CloudDatabaseError
    {
        let name = recordID.map { "\($0)" } ?? "a record"
        guard let serverRecord = error.serverRecord else {
            return .internalError(
                "CloudKit reported a conflict on \(name) without the server's record: fetch it, apply the change again and save"
            )
        }
        do {
            let server = try CloudRecord(serverRecord)
            let client = try client ?? error.clientRecord.map(CloudRecord.init) ?? server
            let ancestor = try error.ancestorRecord.map(CloudRecord.init)
            return .serverRecordChanged(server: server, client: client, ancestor: ancestor)
        } catch {
            return .internalError("CloudKit reported a conflict on \(name) whose records can't be read: \(error)")
        }
    }
}
#endif
