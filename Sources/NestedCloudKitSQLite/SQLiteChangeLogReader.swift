import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer

/// A file's change log as a page of changes reads it (`ChangePages`), in one read transaction.
struct SQLiteChangeLogReader: ChangeLogReading {
    let log: SQLiteChangeLog
    let store: SQLiteRecordStore

    init(database: Database, assets: AssetFiles) {
        log = SQLiteChangeLog(database: database)
        store = SQLiteRecordStore(database: database, assets: assets)
    }

    func zoneLogBounds(_ zoneID: CloudRecord.ZoneID) throws -> ChangeLogBounds? {
        try log.zone(zoneID).map {
            ChangeLogBounds(generation: $0.generation, start: $0.startSequence, horizon: $0.horizon)
        }
    }

    func recordChanges(
        in zoneID: CloudRecord.ZoneID, after sequence: Int, limit: Int, desiredKeys: [String]?
    ) throws -> (modifications: [CloudRecord], deletions: [CloudRecordDeletion], through: Int, more: Bool) {
        guard let zone = try log.zone(zoneID) else { return ([], [], sequence, false) }
        let page = try log.recordChanges(in: zoneID, after: sequence, limit: limit, zone: zone)
        // Assets are attached only when a field of them is returned: `desiredKeys: []` reads no file.
        let withAssets = desiredKeys.map { !$0.isEmpty } ?? true
        var modifications: [CloudRecord] = []
        var deletions: [CloudRecordDeletion] = []
        for change in page.changes {
            let id = CloudRecord.ID(recordName: change.recordName, zoneID: zoneID)
            if let recordType = change.deletedRecordType {
                deletions.append(CloudRecordDeletion(id: id, recordType: recordType))
            } else if let row = try store.storedRecord(withID: id) {
                modifications.append(try store.decode(row, id: id, withAssets: withAssets).keepingFields(desiredKeys))
            }
        }
        return (modifications, deletions, page.through, page.more)
    }

    func databaseLogBounds() throws -> ChangeLogBounds {
        ChangeLogBounds(generation: try log.databaseLog().generation, start: 0)
    }

    func zoneChanges(after sequence: Int, limit: Int) throws
        -> (changes: [(zoneID: CloudRecord.ZoneID, deletion: CloudZoneDeletion.Reason?)], through: Int, more: Bool)
    {
        try log.zoneChanges(after: sequence, limit: limit)
    }

    func missingZoneError(_ zoneID: CloudRecord.ZoneID) throws -> CloudDatabaseError? {
        try store.missingZoneError(zoneID)
    }
}
