import Logging
import NestedCloudKitCodable

/// What the engine logs for each of its events: the level the event means for the app, a message that stays the
/// same from one occurrence to the next (so logs can be searched and counted), and metadata that names the records,
/// zones (with their owners' user record names) and error codes involved, never a field's value.
///
/// | Level | Events |
/// | --- | --- |
/// | `debug` | each request, each page fetched, each batch sent, a sync starting |
/// | `info` | a sync finishing, a conflict merged or won by this device |
/// | `notice` | a retry, an expired token, a conflict the server won, an account adopted |
/// | `warning` | a halt, a skipped record, a sync failing, a zone deleted, an account reset, a change discarded |
/// | `error` | a change the server refused for good, a change a policy discarded |
///
/// The engine's and the store's default loggers are labelled `NestedCloudKitSync`.
enum SyncLog {
    /// A line of the log.
    struct Entry {
        var level: Logger.Level
        var message: Logger.Message
        var metadata: Logger.Metadata
    }

    /// The line an event is logged as; `summary` is the running sync's, with the event in it.
    static func entry(for event: SyncEvent, summary: SyncSummary?) -> Entry {
        switch event {
        case .syncStarted:
            return Entry(level: .debug, message: "sync started", metadata: [:])
        case .syncFinished(nil):
            let summary = summary ?? SyncSummary(events: [])
            return Entry(
                level: .info, message: "sync finished",
                metadata: [
                    "fetched": "\(summary.fetchedRecordCount)", "fetchedDeletions": "\(summary.deletedRecordCount)",
                    "sentSaves": "\(summary.sentSaveCount)", "sentDeletions": "\(summary.sentDeletionCount)",
                    "changedZones": "\(summary.changedZones.count)",
                ])
        case .syncFinished(let error?):
            return Entry(level: .warning, message: "sync failed", metadata: ["error": "\(error.logCode)"])
        case .fetchedChanges(let changes):
            var metadata = zone(changes.zoneID)
            metadata["saved"] = "\(changes.saved.count)"
            metadata["deleted"] = "\(changes.deleted.count)"
            return Entry(level: .debug, message: "fetched changes", metadata: metadata)
        case .sentChanges(let changes):
            return Entry(
                level: .debug, message: "sent changes",
                metadata: ["saved": "\(changes.saved.count)", "deleted": "\(changes.deleted.count)"])
        case .conflictResolved(let resolution):
            return conflict(resolution)
        case .uploadFailed(let id, let error, let halted):
            var metadata = record(id)
            metadata["error"] = "\(error.logCode)"
            return halted
                ? Entry(level: .error, message: "change refused and halted", metadata: metadata)
                : Entry(level: .warning, message: "change refused", metadata: metadata)
        case .changeReverted(let id, let error, _):
            var metadata = record(id)
            metadata["error"] = "\(error.logCode)"
            return Entry(level: .error, message: "change reverted", metadata: metadata)
        case .changeDiscarded(let id, _):
            // The app's decision, most often the user's: a warning, since the user's change is gone for good.
            return Entry(level: .warning, message: "change discarded", metadata: record(id))
        case .recordSkipped(let id, _):
            // The reason is words that may quote a value: the app reads it from the store's skipped records.
            return Entry(level: .warning, message: "record skipped", metadata: record(id))
        case .accountChanged(_, _, let action):
            return Entry(
                level: action == .adopted ? .notice : .warning, message: "account changed",
                metadata: ["action": "\(action.rawValue)"])
        case .zoneDeleted(let zoneID, let reason, let action):
            var metadata = zone(zoneID)
            metadata["reason"] = "\(reason.rawValue)"
            metadata["action"] = "\(action.rawValue)"
            return Entry(level: .warning, message: "zone deleted", metadata: metadata)
        case .sharedZoneRemoved(let zoneID, let discarded):
            var metadata = zone(zoneID)
            metadata["discardedChanges"] = "\(discarded)"
            return Entry(level: discarded > 0 ? .error : .notice, message: "shared zone removed", metadata: metadata)
        case .changeTokenExpired(let zoneID):
            return Entry(
                level: .notice, message: "change token expired", metadata: zoneID.map(zone) ?? ["zone": "database"])
        case .retrying(let delay, let error):
            return Entry(
                level: .notice, message: "retrying", metadata: ["after": "\(delay)", "error": "\(error.logCode)"])
        case .halted(let reason):
            return Entry(level: .warning, message: "sync halted", metadata: ["reason": "\(reason.logCode)"])
        }
    }

    /// A resolution: `info` when this device's change stands, `notice` when the server's change won over it.
    private static func conflict(_ resolution: ConflictResolution) -> Entry {
        var metadata = record(resolution.recordID)
        metadata["decision"] = "\(resolution.decision.logCode)"
        let level: Logger.Level
        switch resolution.decision {
        case .keptServer, .deletedWithServer, .restoredFromServer:
            level = .notice
        case .deletedWithTarget(let target):
            level = .notice
            metadata["target"] = "\(target.recordName)"
        case .restoredForReference(let holder):
            level = .info
            metadata["holder"] = "\(holder.recordName)"
        case .keptClient, .merged, .recreatedFromClient, .keptLocalDeletion:
            level = .info
        }
        return Entry(level: level, message: "conflict resolved", metadata: metadata)
    }

    /// A record's name and zone.
    static func record(_ id: CloudRecord.ID) -> Logger.Metadata {
        var metadata = zone(id.zoneID)
        metadata["record"] = "\(id.recordName)"
        return metadata
    }

    /// A zone's name and owner.
    static func zone(_ zoneID: CloudRecord.ZoneID) -> Logger.Metadata {
        ["zone": "\(zoneID.zoneName)", "owner": "\(zoneID.ownerName)"]
    }
}
