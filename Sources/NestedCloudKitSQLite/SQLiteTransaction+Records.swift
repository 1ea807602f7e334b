import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitRules
import NestedCloudKitServer

// The records of a SQLite file as a transaction reads and writes them: what `CloudModificationPlan` reads to apply
// CloudKit's rules, what the shared copies read, and where the rows, references, assets and earlier versions are
// written.

extension SQLiteTransaction {
    /// How many earlier versions of each record are kept for conflict ancestors.
    static var versionsKept: Int { 8 }

    static var columns: String { "id, record_type, change_tag, created_at, created_by, modified_at, modified_by, body" }

    // MARK: What the rules read

    package func record(withID id: CloudRecord.ID) throws -> CloudRecord? {
        try storedRecord(withID: id).map { try decode($0, id: id, withAssets: false) }
    }

    package func ancestor(of id: CloudRecord.ID, changeTag: String) throws -> CloudRecord? {
        guard let rowID = try rowID(of: id) else { return nil }
        if let current = try Row.fetchOne(
            database, sql: "SELECT \(Self.columns) FROM record WHERE id = ? AND change_tag = ?",
            arguments: [rowID, changeTag])
        {
            return try decode(current, id: id, withAssets: false)
        }
        let row = try Row.fetchOne(
            database,
            sql: """
                SELECT record_id AS id, record_type, change_tag, created_at, created_by, modified_at, modified_by, body
                FROM record_version WHERE record_id = ? AND change_tag = ?
                """, arguments: [rowID, changeTag])
        return try row.map { try decode($0, id: id, withAssets: false) }
    }

    package func referenceHolders(of id: CloudRecord.ID) throws -> [(
        holder: CloudRecord.ID, action: CloudReference.Action
    )] {
        let rows = try Row.fetchAll(
            database,
            sql: """
                SELECT record.zone_name, record.owner_name, record.record_name, reference.action
                FROM reference JOIN record ON record.id = reference.holder
                WHERE reference.target_zone = ? AND reference.target_owner = ? AND reference.target_name = ?
                """, arguments: [id.zoneID.zoneName, id.zoneID.ownerName, id.recordName])
        return try rows.map { row in
            let actionName: String = row[3]
            guard let action = CloudReference.Action(rawValue: actionName) else {
                throw CloudDatabaseError.internalError(
                    "the database file holds an unknown reference action \(actionName)")
            }
            return (
                CloudRecord.ID(recordName: row[2], zoneID: CloudRecord.ZoneID(zoneName: row[0], ownerName: row[1])),
                action
            )
        }
    }

    /// Why a zone can't be used, or `nil` when it exists. A zone the user deleted from Settings
    /// (``SQLiteCloudDatabase/deleteZone(_:reason:)`` with `.purged`) is refused with `userDeletedZone` until the app
    /// creates it again; zone tombstones are never compacted, so the file remembers.
    package func missingZoneError(_ zoneID: CloudRecord.ZoneID) throws -> CloudDatabaseError? {
        if try containsZone(zoneID) { return nil }
        let reason = try String.fetchOne(
            database,
            sql: "SELECT reason FROM zone_tombstone WHERE zone_name = ? AND owner_name = ? ORDER BY seq DESC LIMIT 1",
            arguments: [zoneID.zoneName, zoneID.ownerName])
        return reason == CloudZoneDeletion.Reason.purged.rawValue ? .userDeletedZone(zoneID) : .zoneNotFound(zoneID)
    }

    package func containsZone(_ zoneID: CloudRecord.ZoneID) throws -> Bool {
        if let known = memo.zones[zoneID] { return known }
        let exists =
            try Bool.fetchOne(
                database, sql: "SELECT EXISTS (SELECT 1 FROM zone WHERE zone_name = ? AND owner_name = ?)",
                arguments: [zoneID.zoneName, zoneID.ownerName]) ?? false
        memo.zones[zoneID] = exists
        return exists
    }

    /// Forgets which zones exist: a transaction created or deleted one.
    func forgetZones() {
        memo.zones.removeAll()
        memo.rows.removeAll()
    }

    // MARK: Reading

    func storedRecord(withID id: CloudRecord.ID) throws -> Row? {
        if let known = memo.rows[id] { return known }
        let row = try Row.fetchOne(
            database,
            sql: "SELECT \(Self.columns) FROM record WHERE zone_name = ? AND owner_name = ? AND record_name = ?",
            arguments: [id.zoneID.zoneName, id.zoneID.ownerName, id.recordName])
        memo.rows[id] = .some(row)
        return row
    }

    func rowID(of id: CloudRecord.ID) throws -> Int64? {
        try Int64.fetchOne(
            database, sql: "SELECT id FROM record WHERE zone_name = ? AND owner_name = ? AND record_name = ?",
            arguments: [id.zoneID.zoneName, id.zoneID.ownerName, id.recordName])
    }

    /// A record from its row; with its assets' contents as files, or as stored (for the rules, which don't read them).
    func decode(_ row: Row, id: CloudRecord.ID, withAssets: Bool) throws -> CloudRecord {
        let body: String = row["body"]
        var record: CloudRecord
        do {
            record = try memo.decoder.decode(CloudRecord.self, from: Data(body.utf8))
        } catch {
            throw CloudDatabaseError.internalError("the stored record \(id) can't be read: \(error)", underlying: error)
        }
        record.id = id
        record.recordType = row["record_type"]
        // The body keeps the one system field the server sets that has no column: the share of a shared root.
        let shareID = record.systemFields?.shareID
        record.systemFields = CloudRecord.SystemFields(
            changeTag: row["change_tag"],
            creationDate: (row["created_at"] as Int64?).map { Date(timeIntervalSince1970: Double($0) / 1000) },
            creatorUserRecordName: row["created_by"],
            modificationDate: (row["modified_at"] as Int64?).map { Date(timeIntervalSince1970: Double($0) / 1000) },
            lastModifiedUserRecordName: row["modified_by"],
            shareID: shareID
        )
        if withAssets, record.fields.contains(where: { $0.value.kind == .asset || $0.value.kind == .assetList }) {
            try attachAssets(to: &record, rowID: row["id"])
        }
        return record
    }

    /// Points each stored asset at a file holding its contents.
    func attachAssets(to record: inout CloudRecord, rowID: Int64) throws {
        var contents: [String: [Int: Data]] = [:]
        for row in try Row.fetchAll(
            database, sql: "SELECT field, position, content FROM asset WHERE record_id = ?", arguments: [rowID])
        {
            contents[row[0], default: [:]][row[1]] = row[2]
        }
        let changeTag = record.systemFields?.changeTag ?? ""
        func withFile(_ asset: CloudAsset, field: String, fieldIndex: Int, position: Int) throws -> CloudAsset {
            guard let content = contents[field]?[position] else { return asset }
            var located = asset
            located.fileURL = try assets.file(
                for: content, name: "\(rowID)-\(changeTag)-\(fieldIndex)-\(position)"
            )
            return located
        }
        for (fieldIndex, (name, value)) in record.fields.enumerated() {
            switch value {
            case .asset(let asset):
                record.fields[name] = .asset(try withFile(asset, field: name, fieldIndex: fieldIndex, position: 0))
            case .assetList(let list):
                record.fields[name] = .assetList(
                    try list.enumerated().map {
                        try withFile($1, field: name, fieldIndex: fieldIndex, position: $0)
                    })
            default: break
            }
        }
    }

    // MARK: Reading a zone (for the shared databases of a server)

    /// The share records of a zone, by name.
    package func shares(in zone: CloudRecord.ZoneID) throws -> [CloudRecord] {
        try records(
            sql: "WHERE zone_name = ? AND owner_name = ? AND record_type = ?",
            [
                zone.zoneName, zone.ownerName, CloudShare.recordType,
            ])
    }

    /// Every share record of the file, by zone and name: zone by zone, so that each is one lookup in the index of
    /// record types rather than a scan of every record.
    package func allShares() throws -> [CloudRecord] {
        try Row.fetchAll(database, sql: "SELECT zone_name, owner_name FROM zone ORDER BY zone_name, owner_name")
            .flatMap { try shares(in: CloudRecord.ZoneID(zoneName: $0[0], ownerName: $0[1])) }
    }

    /// Every record of a zone as the share rules see it: its ID, type, change tag, parent and share, without its
    /// fields. Read by SQLite from the stored JSON, without decoding a record in Swift: a shared zone's viewers
    /// are worked out from these after every write to it.
    package func skeletons(in zone: CloudRecord.ZoneID) throws -> [CloudRecord] {
        try skeletons(where: "zone_name = ? AND owner_name = ?", [zone.zoneName, zone.ownerName], zone: zone)
    }

    /// One record as the share rules see it; see ``skeletons(in:)``.
    package func skeleton(of id: CloudRecord.ID) throws -> CloudRecord? {
        try skeletons(
            where: "zone_name = ? AND owner_name = ? AND record_name = ?",
            [id.zoneID.zoneName, id.zoneID.ownerName, id.recordName], zone: id.zoneID
        ).first
    }

    /// Whether any record of the record's zone has it as its parent (from the `record_by_parent` index, which a
    /// server's files have).
    package func hasChildren(_ id: CloudRecord.ID) throws -> Bool {
        try Bool.fetchOne(
            database,
            sql: """
                SELECT EXISTS (SELECT 1 FROM record WHERE zone_name = ? AND owner_name = ?
                    AND json_extract(body, '$.parentID.recordName') = ?)
                """, arguments: [id.zoneID.zoneName, id.zoneID.ownerName, id.recordName]) ?? false
    }

    private func skeletons(where condition: String, _ arguments: StatementArguments, zone: CloudRecord.ZoneID) throws
        -> [CloudRecord]
    {
        let rows = try Row.fetchAll(
            database,
            sql: """
                SELECT record_name, record_type, change_tag,
                    json_extract(body, '$.parentID.recordName'), json_extract(body, '$.parentID.zoneID.zoneName'),
                    json_extract(body, '$.parentID.zoneID.ownerName'),
                    json_extract(body, '$.systemFields.shareID.recordName'),
                    json_extract(body, '$.systemFields.shareID.zoneID.zoneName'),
                    json_extract(body, '$.systemFields.shareID.zoneID.ownerName')
                FROM record WHERE \(condition)
                """, arguments: arguments)
        func id(_ row: Row, _ start: Int) -> CloudRecord.ID? {
            guard let name: String = row[start], let zoneName: String = row[start + 1],
                let ownerName: String = row[start + 2]
            else { return nil }
            return CloudRecord.ID(
                recordName: name, zoneID: CloudRecord.ZoneID(zoneName: zoneName, ownerName: ownerName))
        }
        return rows.map { row in
            var record = CloudRecord(recordType: row[1], id: CloudRecord.ID(recordName: row[0], zoneID: zone))
            record.parentID = id(row, 3)
            record.systemFields = CloudRecord.SystemFields(changeTag: row[2], shareID: id(row, 6))
            return record
        }
    }

    /// The change tag of each record of a zone, by record name.
    package func changeTags(in zone: CloudRecord.ZoneID) throws -> [String: String] {
        try Row.fetchAll(
            database, sql: "SELECT record_name, change_tag FROM record WHERE zone_name = ? AND owner_name = ?",
            arguments: [zone.zoneName, zone.ownerName]
        )
        .reduce(into: [:]) { $0[$1[0]] = $1[1] }
    }

    /// The stored contents of these records' assets, by where each is.
    func assetContents(of ids: [CloudRecord.ID]) throws -> [AssetKey: Data] {
        var contents: [AssetKey: Data] = [:]
        for id in ids {
            guard let rowID = try rowID(of: id) else { continue }
            for row in try Row.fetchAll(
                database, sql: "SELECT field, position, content FROM asset WHERE record_id = ?", arguments: [rowID])
            {
                contents[AssetKey(recordID: id, field: row[0], position: row[1])] = row[2]
            }
        }
        return contents
    }

    private func records(sql condition: String, _ arguments: StatementArguments) throws -> [CloudRecord] {
        try Row.fetchAll(
            database,
            sql: "SELECT \(Self.columns), zone_name, owner_name, record_name FROM record \(condition) "
                + "ORDER BY zone_name, owner_name, record_name",
            arguments: arguments
        )
        .map { row in
            let id = CloudRecord.ID(
                recordName: row["record_name"],
                zoneID: CloudRecord.ZoneID(zoneName: row["zone_name"], ownerName: row["owner_name"]))
            return try decode(row, id: id, withAssets: false)
        }
    }

    // MARK: Writing

    /// Writes these records as they are, system fields included, and removes others; `contents` holds the
    /// contents of assets that have none in memory. Returns the rows of the deleted records, whose asset files
    /// can go.
    ///
    /// - Parameter keepingVersions: Whether a record's earlier version is kept for the ancestor of a conflict.
    ///   A server's shared copy keeps none: writes to it go to the owner's file, which has them.
    func writeRows(
        _ records: [CloudRecord], removing removedIDs: [CloudRecord.ID], contents: [AssetKey: Data],
        keepingVersions: Bool = true
    ) throws -> [Int64] {
        var deletedRows: [Int64] = []
        defer { memo.rows.removeAll() }
        for record in records {
            let rowID: Int64
            if let existing = try storedRecord(withID: record.id) {
                rowID = existing["id"]
                if keepingVersions { try keepVersion(existing) }
                try database.execute(
                    sql: """
                        UPDATE record SET record_type = ?, change_tag = ?, created_at = ?, created_by = ?, modified_at = ?,
                            modified_by = ?, body = ? WHERE id = ?
                        """, arguments: rowArguments(record) + [rowID])
                try database.execute(sql: "DELETE FROM reference WHERE holder = ?", arguments: [rowID])
            } else {
                try database.execute(
                    sql: """
                        INSERT INTO record (zone_name, owner_name, record_name, record_type, change_tag, created_at,
                            created_by, modified_at, modified_by, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [record.id.zoneID.zoneName, record.id.zoneID.ownerName, record.id.recordName]
                        + rowArguments(record))
                rowID = database.lastInsertedRowID
            }
            try writeReferences(of: record, rowID: rowID)
            try writeAssets(of: record, rowID: rowID, contents: contents)
        }
        for id in removedIDs {
            guard let rowID = try rowID(of: id) else { continue }
            try database.execute(sql: "DELETE FROM record WHERE id = ?", arguments: [rowID])
            deletedRows.append(rowID)
        }
        return deletedRows
    }

    private func rowArguments(_ record: CloudRecord) throws -> StatementArguments {
        let system = record.systemFields
        return [
            record.recordType, system?.changeTag ?? "",
            system?.creationDate.flatMap(milliseconds), system?.creatorUserRecordName,
            system?.modificationDate.flatMap(milliseconds), system?.lastModifiedUserRecordName,
            try body(of: record),
        ]
    }

    /// Whole milliseconds since 1970; system dates are whole milliseconds already, and always in range.
    private func milliseconds(_ date: Date) -> Int64? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        return milliseconds.isFinite && abs(milliseconds) < 9e18 ? Int64(milliseconds) : nil
    }

    /// The record's fields, parent and share state as JSON, without system fields (they have columns, but for the
    /// share ID) and without asset contents (they have a table).
    private func body(of record: CloudRecord) throws -> String {
        var stripped = CloudRecord(recordType: record.recordType, id: record.id)
        stripped.parentID = record.parentID
        stripped.shareContents = record.shareContents
        if let shareID = record.systemFields?.shareID {
            stripped.systemFields = CloudRecord.SystemFields(shareID: shareID)
        }
        for (name, value) in record.fields {
            switch value {
            case .asset(let asset): stripped.fields[name] = .asset(asset.withoutContents)
            case .assetList(let list): stripped.fields[name] = .assetList(list.map(\.withoutContents))
            default: stripped.fields[name] = value
            }
        }
        stripped.setEncrypted(true, fieldsNamed: record.encryptedFieldNames)
        return String(decoding: try memo.encoder.encode(stripped), as: UTF8.self)
    }

    private func keepVersion(_ row: Row) throws {
        let rowID: Int64 = row["id"]
        try database.execute(
            sql: """
                INSERT INTO record_version (record_id, change_tag, record_type, created_at, created_by, modified_at, modified_by, body)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                rowID, row["change_tag"], row["record_type"], row["created_at"], row["created_by"],
                row["modified_at"], row["modified_by"], row["body"],
            ])
        try database.execute(
            sql: """
                DELETE FROM record_version WHERE record_id = ? AND rowid NOT IN (
                    SELECT rowid FROM record_version WHERE record_id = ? ORDER BY rowid DESC LIMIT ?)
                """, arguments: [rowID, rowID, Self.versionsKept])
    }

    private func writeReferences(of record: CloudRecord, rowID: Int64) throws {
        for (name, value) in record.fields {
            for reference in value.references {
                try database.execute(
                    sql: """
                        INSERT INTO reference (holder, field, target_zone, target_owner, target_name, action) VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        rowID, name, reference.recordID.zoneID.zoneName, reference.recordID.zoneID.ownerName,
                        reference.recordID.recordName, reference.action.rawValue,
                    ])
            }
        }
    }

    /// Stores the contents of the record's assets that came with contents, and removes those of assets the
    /// record no longer holds.
    ///
    /// An asset without contents of its own is one the save kept from the server (a field the client didn't
    /// send, under any save policy that keeps it) or sent back as the server described it: its stored contents
    /// stay, as CloudKit keeps an asset that a save doesn't replace.
    private func writeAssets(of record: CloudRecord, rowID: Int64, contents: [AssetKey: Data]) throws {
        var held: Set<AssetPosition> = []
        for (name, value) in record.fields {
            for (position, asset) in value.assets.enumerated() {
                held.insert(AssetPosition(field: name, position: position))
                guard
                    let content = asset.data ?? contents[AssetKey(recordID: record.id, field: name, position: position)]
                else { continue }
                try database.execute(
                    sql: "INSERT OR REPLACE INTO asset (record_id, field, position, content) VALUES (?, ?, ?, ?)",
                    arguments: [rowID, name, position, content])
            }
        }
        for row in try Row.fetchAll(
            database, sql: "SELECT field, position FROM asset WHERE record_id = ?", arguments: [rowID])
        {
            let stored = AssetPosition(field: row[0], position: row[1])
            guard !held.contains(stored) else { continue }
            try database.execute(
                sql: "DELETE FROM asset WHERE record_id = ? AND field = ? AND position = ?",
                arguments: [rowID, stored.field, stored.position])
        }
    }
}

/// An asset's place in its record: the field, and the position in an asset list (0 for a single asset).
private struct AssetPosition: Hashable {
    let field: String
    let position: Int
}

extension CloudAsset {
    /// The asset's metadata, without its contents or local file.
    var withoutContents: CloudAsset {
        var copy = self
        copy.data = nil
        copy.fileURL = nil
        return copy
    }
}
