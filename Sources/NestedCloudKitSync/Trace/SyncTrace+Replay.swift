import Foundation
import NestedCloudKitCodable

extension SyncTrace {
    /// What ``replay(_:into:)`` wrote.
    public struct ReplaySummary: Sendable, Hashable {
        /// Saves written, one per record per line that showed it.
        public var savedRecords: Int
        /// Deletions written.
        public var deletedRecords: Int
        /// Zones created.
        public var createdZones: Int
        /// Lines that wrote nothing: failed calls, and calls that don't show the server's records (the account, the
        /// subscriptions, the list of zones, a database's changes but for the zones it says were deleted).
        public var skippedEntries: Int
        /// What the database refused, by record: after a second attempt once the rest of the line was written (a
        /// reference to a record saved after it, say).
        public var failures: [CloudRecord.ID: CloudDatabaseError]
    }

    /// Writes into `database` (a fresh server: the in-memory one, the emulator) what the traced server showed, line
    /// by line in order: the zones created and deleted, each record as the server answered a save or a fetch with it
    /// (saved over what is there, whatever its change tag, with the fields it no longer holds cleared), each
    /// deletion, and the zones a database's changes said were deleted. What the traced devices saw of the server
    /// ends up in `database`; records no traced device saved or fetched aren't there, and a fetch of some fields
    /// only (``Entry/desiredKeys``) writes nothing but its deletions.
    ///
    /// A redacted trace replays to the same records, types, fields and sizes, with values that say nothing. Replay
    /// each database's lines into a database of its own: filter ``Entry/client`` for a device's shared database.
    ///
    /// - Throws: An error of `database` that refused a whole request.
    @discardableResult
    public static func replay(_ entries: [Entry], into database: any CloudDatabase) async throws -> ReplaySummary {
        var replay = Replay(database: database)
        for entry in entries.sorted(by: { $0.sequence < $1.sequence }) {
            try await replay.apply(entry)
        }
        return replay.summary
    }

    private struct Replay {
        let database: any CloudDatabase
        var summary = ReplaySummary(
            savedRecords: 0, deletedRecords: 0, createdZones: 0, skippedEntries: 0, failures: [:])
        var zones: Set<CloudRecord.ZoneID> = []
        /// The field names each record was last written with: a complete record fetched later without one of them
        /// had it cleared.
        var fieldNames: [CloudRecord.ID: Set<String>] = [:]

        mutating func apply(_ entry: Entry) async throws {
            guard entry.error == nil else {
                summary.skippedEntries += 1
                return
            }
            switch entry.call {
            case "modifyRecordZones":
                for zone in entry.zones ?? [] { try await create(zone) }
                try await delete(entry.deletedZones ?? [])
            case "modifyRecords", "recordZoneChanges", "records", "query", "queryContinued":
                // A fetch of some fields only (an ID-only query, say) shows which records exist, not what they hold.
                let records = entry.desiredKeys == nil ? records(of: entry) : []
                try await write(records, deleting: entry.deleted ?? [])
            case "databaseChanges" where entry.token != nil:
                // Only a device that knew the database before is told of deletions it didn't see happen.
                try await delete((entry.deletedZones ?? []).filter { zones.contains($0) })
            default:
                summary.skippedEntries += 1
            }
        }

        /// The records a line shows the server holding, ready to save over whatever a fresh server has: without
        /// change tags, and with the fields to clear: those a save cleared (which the server's answer doesn't list),
        /// or, for a fetched record, which is whole, those written before that it no longer holds.
        private mutating func records(of entry: Entry) -> [CloudRecord] {
            let sent = Dictionary((entry.saving ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let isFetch = entry.call != "modifyRecords"
            return (entry.received ?? []).map { received in
                var record = received
                record.systemFields = nil
                let held = Set(record.fields.names)
                var cleared = Set(sent[record.id]?.clearedFieldNames ?? [])
                if isFetch { cleared.formUnion(fieldNames[record.id] ?? []) }
                cleared.subtract(held)
                record.clearedFieldNames = cleared.sorted()
                fieldNames[record.id, default: []].formUnion(held)
                if isFetch { fieldNames[record.id] = held }
                fieldNames[record.id]?.subtract(cleared)
                return record
            }
        }

        /// Deletes zones, and forgets what their records held.
        private mutating func delete(_ deleted: [CloudRecord.ZoneID]) async throws {
            guard !deleted.isEmpty else { return }
            _ = try await database.modifyRecordZones(saving: [], deleting: deleted)
            zones.subtract(deleted)
            fieldNames = fieldNames.filter { !deleted.contains($0.key.zoneID) }
        }

        private mutating func create(_ zone: CloudRecord.ZoneID) async throws {
            guard zone.zoneName != CloudRecord.ZoneID.defaultZoneName, !zones.contains(zone) else { return }
            let results = try await database.modifyRecordZones(saving: [zone], deleting: [])
            if case .failure(let error)? = results.saveResults[zone] { throw error }
            zones.insert(zone)
            summary.createdZones += 1
        }

        private mutating func write(_ records: [CloudRecord], deleting deletions: [CloudRecord.ID]) async throws {
            for id in deletions { fieldNames[id] = nil }
            for zone in Set(records.map(\.id.zoneID) + deletions.map(\.zoneID)) { try await create(zone) }
            let limit = max(1, database.maximumItemsPerRequest)
            // What a first attempt refused is tried once more after the rest: a reference to a record that comes
            // later in the line is then satisfied.
            var waiting = records
            for attempt in 0..<2 where !waiting.isEmpty {
                var refused: [CloudRecord] = []
                for start in stride(from: 0, to: waiting.count, by: limit) {
                    let chunk = Array(waiting[start..<min(start + limit, waiting.count)])
                    let results = try await database.modifyRecords(
                        saving: chunk, deleting: [], savePolicy: .allKeys, atomically: false)
                    for record in chunk {
                        switch results.saveResults[record.id] {
                        case .success?:
                            summary.savedRecords += 1
                            summary.failures[record.id] = nil
                        case .failure(let error)?:
                            summary.failures[record.id] = error
                            if attempt == 0 { refused.append(record) }
                        case nil:
                            continue
                        }
                    }
                }
                waiting = refused
            }
            for start in stride(from: 0, to: deletions.count, by: limit) {
                let chunk = Array(deletions[start..<min(start + limit, deletions.count)])
                let results = try await database.modifyRecords(
                    saving: [], deleting: chunk, savePolicy: .allKeys, atomically: false)
                for id in chunk {
                    switch results.deleteResults[id] {
                    // Already gone: what a deletion shows holds.
                    case .success?: summary.deletedRecords += 1
                    case .failure(let error)? where error.code == .unknownItem: summary.deletedRecords += 1
                    case .failure(let error)?: summary.failures[id] = error
                    case nil: continue
                    }
                }
            }
        }
    }
}
