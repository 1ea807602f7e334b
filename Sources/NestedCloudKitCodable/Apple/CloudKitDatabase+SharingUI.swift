#if canImport(CloudKit)
import CloudKit
import Foundation

// The system's sharing UI works with CloudKit's own objects: `UICloudSharingController(share:container:)` and
// SwiftUI's `ShareLink` (through `CKShareTransferRepresentation.existing(_:container:allowedSharingOptions:)`) take
// a `CKShare` that CloudKit holds and the `CKContainer` it is in. These give them those, from a portable share.

extension CloudKitDatabase {
    /// The `CKShare` and `CKContainer` the system's sharing UI needs for a share saved to this database: the
    /// share as CloudKit holds it now (fetched from the database, with its participants and URL), and the database's
    /// container.
    ///
    /// ```swift
    /// let (share, container) = try await database.sharingItems(for: cloudShare.id)
    /// let controller = UICloudSharingController(share: share, container: container)
    /// // or, in SwiftUI: ShareLink(item: CKShareTransferRepresentation.existing(share, container: container), …)
    /// ```
    ///
    /// The controller saves what the user changes in it to CloudKit itself; hand the share back to the store when
    /// its delegate says so (`cloudSharingControllerDidSaveShare(_:)`, `cloudSharingControllerDidStopSharing(_:)`):
    /// `SyncEngine.refreshShare(_:)` reads the server's copy into the store.
    ///
    /// - Parameter shareID: The share's record ID (``CloudShare/id``).
    /// - Throws: ``CloudDatabaseError/unknownItem(_:)`` for a share CloudKit doesn't have (save it first, for
    ///   example with `SyncEngine.share(_:_:)`), ``CloudDatabaseError/invalidArguments(_:)`` for a record that
    ///   isn't a share, and the request's other errors.
    public func sharingItems(for shareID: CloudRecord.ID) async throws -> (share: CKShare, container: CKContainer) {
        let results = try await request(zoneID: shareID.zoneID, items: 1) {
            try await database.records(for: [shareID.ckRecordID], desiredKeys: nil)
        }
        let record: CKRecord
        switch results[shareID.ckRecordID] {
        case .success(let found)?: record = found
        case .failure(let error)?:
            throw CloudDatabaseError(error, recordID: shareID, zoneID: shareID.zoneID, requestedItems: 1, client: nil)
        case nil: throw CloudDatabaseError.unknownItem(shareID)
        }
        guard let share = record as? CKShare else {
            throw CloudDatabaseError.invalidArguments(
                "\(shareID) is a \(record.recordType), not a share: pass a share's ID (CloudShare.id)")
        }
        return (share, accountContainer)
    }
}
#endif
