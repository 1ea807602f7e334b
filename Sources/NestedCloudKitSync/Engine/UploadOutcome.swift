import NestedCloudKitCodable

/// What the server's answer to one upload request means for each change in it, sorted before anything acts on it:
/// the engine's rules for an answer are this one pure function, tested on their own, and the send loop only acts
/// on what it says.
struct UploadOutcome: Sendable {
    /// A change and the server's copy of its record.
    struct Answered: Sendable {
        var upload: Upload
        var server: CloudRecord
    }

    /// A change and the error the server refused it with.
    struct Refused: Sendable {
        var upload: Upload
        var error: CloudDatabaseError
    }

    /// A zone the server doesn't have any more, and why.
    struct LostZone: Sendable, Equatable {
        var zoneID: CloudRecord.ZoneID
        var reason: CloudZoneDeletion.Reason
    }

    /// Saves the server has: answered, or our own write whose answer was lost, read back as a conflict with the
    /// same fields.
    var saved: [Answered] = []
    /// Deletions the server has, or never had the record of.
    var deleted: [Upload] = []
    /// Saves another device's change on the server conflicts with.
    var conflicts: [Answered] = []
    /// Saves that met a copy this device sent earlier without an answer: they go again on top of it.
    var earlierUploads: [Answered] = []
    /// Records the server no longer has, which this device had synced: the server deleted them.
    var serverDeletions: [CloudRecord.ID] = []
    /// Zones the server lost, each once, in the order the changes named them.
    var lostZones: [LostZone] = []
    /// Changes to send again at once in this sync: their batch failed because of another change, or their zone is
    /// about to be created again.
    var sendAgain: [UploadKey] = []
    /// Changes that failed for a reason that passes (a rate limit, an unavailable service): each is sent again after
    /// a wait, in the same sync, until it has been tried as often as the retry policy allows.
    var transient: [Refused] = []
    /// Changes this answer leaves queued for a reason that may pass, with no way forward in this sync: the server
    /// gave no answer for them, or their zone was lost again right after being created again. A sync that leaves
    /// one doesn't end as a success.
    var leftQueued: [Refused] = []
    /// An error no change can get past (quota, permission, authentication): the sync stops with it.
    var halt: CloudDatabaseError?
    /// Changes the server refused for what they are.
    var refused: [Refused] = []

    /// Sorts the answer to `uploads`. A change without an answer is left queued: it waits for the next sync rather
    /// than loop in this one. `recreatedZones` are the zones this sync already created again: a change that finds
    /// one lost again waits for the next sync too.
    init(_ uploads: [Upload], results: CloudModifyResults, recreatedZones: Set<CloudRecord.ZoneID>) {
        for upload in uploads {
            let id = upload.entry.id
            if let record = upload.record {
                switch results.saveResults[id] {
                case nil: leftQueued.append(Refused(upload: upload, error: .serverResponseLost))
                case .success(let server)?: saved.append(Answered(upload: upload, server: server))
                case .failure(let error)?:
                    switch error.kind {
                    case .serverRecordChanged(let server, _, _): sortConflict(upload, record: record, server: server)
                    case .unknownItem where record.systemFields != nil: serverDeletions.append(id)
                    default: sortFailure(upload, error: error, recreatedZones: recreatedZones)
                    }
                }
            } else {
                switch results.deleteResults[id] {
                case nil: leftQueued.append(Refused(upload: upload, error: .serverResponseLost))
                case .success?: deleted.append(upload)
                case .failure(let error)? where error.code == .unknownItem: deleted.append(upload)
                case .failure(let error)?: sortFailure(upload, error: error, recreatedZones: recreatedZones)
                }
            }
        }
    }

    /// Our own write whose answer was lost reads as a conflict: with the same fields (assets by contents), or as an
    /// earlier upload this one goes on top of. Anything else is another device's change.
    private mutating func sortConflict(_ upload: Upload, record: CloudRecord, server: CloudRecord) {
        let answered = Answered(upload: upload, server: server)
        if AssetFiles.sameContents(server.fields, record.fields) {
            saved.append(answered)
        } else if upload.entry.isSentCopy(server) {
            earlierUploads.append(answered)
        } else {
            conflicts.append(answered)
        }
    }

    private mutating func sortFailure(
        _ upload: Upload, error: CloudDatabaseError, recreatedZones: Set<CloudRecord.ZoneID>
    ) {
        switch error.kind {
        case .batchRequestFailed:
            sendAgain.append(upload.key)
        case _ where error.isRetryable:
            transient.append(Refused(upload: upload, error: error))
        case .permissionFailure where upload.entry.id.zoneID.isShared:
            // The owner's share doesn't let the user make this change (made read-only since it was queued): the
            // change is refused alone, and the user's other changes go on.
            refused.append(Refused(upload: upload, error: error))
        case .quotaExceeded, .permissionFailure, .notAuthenticated:
            halt = error
        case _ where Self.lostZone(error) != nil:
            // Lost again right after being created again: left for the next sync.
            guard let zone = Self.lostZone(error), !recreatedZones.contains(zone.zoneID) else {
                return leftQueued.append(Refused(upload: upload, error: error))
            }
            sendAgain.append(upload.key)
            if !lostZones.contains(where: { $0.zoneID == zone.zoneID }) { lostZones.append(zone) }
        default:
            refused.append(Refused(upload: upload, error: error))
        }
    }

    /// The zone an error says is gone from the server, and why.
    static func lostZone(_ error: CloudDatabaseError) -> LostZone? {
        switch error.kind {
        case .zoneNotFound(let zone): LostZone(zoneID: zone, reason: .deleted)
        case .userDeletedZone(let zone): LostZone(zoneID: zone, reason: .purged)
        case .encryptedDataReset(let zone): LostZone(zoneID: zone, reason: .encryptedDataReset)
        default: nil
        }
    }
}
