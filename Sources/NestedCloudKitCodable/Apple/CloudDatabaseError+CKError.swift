#if canImport(CloudKit)
import CloudKit
import Foundation

extension CloudDatabaseError {
    /// The portable form of an error from CloudKit's framework, about the given record when it is about one.
    public init(_ error: any Error, recordID: CloudRecord.ID? = nil) {
        guard let ckError = error as? CKError else {
            self = .internalError("\(error)")
            return
        }
        let id = recordID ?? CloudRecord.ID(recordName: "")
        switch ckError.code {
        case .unknownItem: self = .unknownItem(id)
        case .serverRecordChanged:
            if let server = ckError.serverRecord.flatMap({ try? CloudRecord($0) }) {
                let client = ckError.clientRecord.flatMap { try? CloudRecord($0) } ?? server
                self = .serverRecordChanged(server: server, client: client, ancestor: ckError.ancestorRecord.flatMap { try? CloudRecord($0) })
            } else {
                self = .internalError("CloudKit reported a conflict without the server's record: \(ckError)")
            }
        case .limitExceeded: self = .limitExceeded(limit: 0, requested: 0)
        case .partialFailure:
            var failures: [CloudRecord.ID: CloudDatabaseError] = [:]
            for (key, itemError) in ckError.partialErrorsByItemID ?? [:] {
                guard let itemID = key.base as? CKRecord.ID else { continue }
                failures[CloudRecord.ID(itemID)] = CloudDatabaseError(itemError, recordID: CloudRecord.ID(itemID))
            }
            self = .partialFailure(failures)
        case .zoneNotFound, .userDeletedZone: self = .zoneNotFound(id.zoneID)
        case .requestRateLimited: self = .requestRateLimited(retryAfter: ckError.retryAfterSeconds ?? 1)
        case .serviceUnavailable, .zoneBusy: self = .serviceUnavailable(retryAfter: ckError.retryAfterSeconds)
        case .networkFailure, .networkUnavailable: self = .networkFailure("\(ckError)")
        case .batchRequestFailed: self = .batchRequestFailed(id)
        case .invalidArguments, .constraintViolation: self = .invalidArguments("\(ckError)")
        case .referenceViolation: self = .referenceViolation(id, reason: "\(ckError)")
        case .quotaExceeded: self = .quotaExceeded
        case .permissionFailure, .missingEntitlement: self = .permissionFailure("\(ckError)")
        case .notAuthenticated: self = .notAuthenticated
        default: self = .internalError("\(ckError)")
        }
    }
}
#endif
