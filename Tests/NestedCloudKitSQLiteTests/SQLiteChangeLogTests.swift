import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitSQLite
import TestSupport
import Testing

/// The SQLite database's change log: persistent, migrated into older files, bounded.
@Suite("SQLite change log")
struct SQLiteChangeLogTests {
    private let zone = CloudRecord.ZoneID(zoneName: "Synced")

    private func note(_ name: String) -> CloudRecord {
        record("Note", name, ["text": .string(name)], zone: zone)
    }

    @Test func theLogAndItsTokensSurviveARestart() async throws {
        let path = temporaryDatabasePath("restart")
        var database = try SQLiteCloudDatabase(path: path)
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        _ = try await database.saveRecords([note("a"), note("b")])
        let token = try await database.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        let databaseToken = try await database.databaseChanges(since: nil).changeToken
        let user = try await database.userRecordName()
        try await database.deleteRecord(withID: CloudRecord.ID(recordName: "a", zoneID: zone))
        _ = try await database.save(note("c"))
        try database.close()

        database = try SQLiteCloudDatabase(path: path)
        let changes = try await database.recordZoneChanges(inZoneWith: zone, since: token)
        #expect(changes.modifications.map(\.id.recordName) == ["c"])
        #expect(
            changes.deletions == [
                CloudRecordDeletion(id: CloudRecord.ID(recordName: "a", zoneID: zone), recordType: "Note")
            ])
        #expect(try await database.databaseChanges(since: databaseToken).modifiedZoneIDs == [zone])
        #expect(try await database.userRecordName() == user)
        try database.close()
    }

    @Test func aFileOfTheFirstSchemaIsMigratedWithItsRecordsInTheLog() async throws {
        let path = temporaryDatabasePath("version-1")
        let database = try SQLiteCloudDatabase(path: path)
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        let saved = try await database.saveRecords([note("a"), note("b")])
        try database.close()
        // Back to version 1's layout, without the migrator's table: what a file written by release 1.x holds.
        let queue = try DatabaseQueue(path: path)
        try await queue.writeWithoutTransaction { database in
            try database.execute(
                sql: """
                    DROP INDEX record_by_change; DROP INDEX record_by_modification; DROP INDEX zone_by_change;
                    ALTER TABLE record DROP COLUMN change_seq;
                    ALTER TABLE zone DROP COLUMN generation; ALTER TABLE zone DROP COLUMN start_seq;
                    ALTER TABLE zone DROP COLUMN change_seq; ALTER TABLE zone DROP COLUMN horizon_seq;
                    DROP TABLE record_tombstone; DROP TABLE zone_tombstone; DROP TABLE subscription;
                    DROP TABLE text_metadata;
                    DELETE FROM metadata WHERE key <> 'change_counter';
                    DROP TABLE grdb_migrations;
                    PRAGMA user_version = 1;
                    """)
        }
        try queue.close()

        let migrated = try SQLiteCloudDatabase(path: path)
        let changes = try await migrated.recordZoneChanges(inZoneWith: zone, since: nil)
        #expect(changes.modifications == saved)
        let token = changes.changeToken
        _ = try await migrated.save(note("c"))
        #expect(
            try await migrated.recordZoneChanges(inZoneWith: zone, since: token).modifications.map(\.id.recordName) == [
                "c"
            ])
        #expect(try await migrated.databaseChanges(since: nil).modifiedZoneIDs == [zone])
        try migrated.close()
        #expect(try Self.layout(of: path) == Self.currentLayout)
    }

    @Test func aFileOfTheSecondSchemaWrittenBeforeTheMigratorKeepsItsRecordsAndLog() async throws {
        let path = temporaryDatabasePath("version-2")
        let database = try SQLiteCloudDatabase(path: path)
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        let saved = try await database.saveRecords([note("a"), note("b")])
        let token = try await database.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        _ = try await database.deleteRecord(withID: saved[0].id)
        try database.close()
        // Release 2.0's file: the same layout, its version in user_version only.
        let queue = try DatabaseQueue(path: path)
        try await queue.writeWithoutTransaction { try $0.execute(sql: "DROP TABLE grdb_migrations") }
        try queue.close()

        let reopened = try SQLiteCloudDatabase(path: path)
        let changes = try await reopened.recordZoneChanges(inZoneWith: zone, since: token)
        #expect(changes.modifications.isEmpty)
        #expect(changes.deletions.map(\.id) == [saved[0].id])
        #expect(try await reopened.record(for: saved[1].id) == saved[1])
        try reopened.close()
        #expect(try Self.layout(of: path) == Self.currentLayout)
    }

    @Test func aVersionTwoFileKeepsItsZoneDeletionsAndLearnsToKeepAPurgeBesideALaterDeletion() async throws {
        let path = temporaryDatabasePath("version-2-tombstones")
        let database = try SQLiteCloudDatabase(path: path)
        let other = CloudRecord.ZoneID(zoneName: "Other")
        _ = try await database.modifyRecordZones(saving: [zone, other], deleting: [])
        let token = try await database.databaseChanges(since: nil).changeToken
        try await database.deleteZone(zone, reason: .purged)
        _ = try await database.modifyRecordZones(saving: [], deleting: [other])
        try database.close()
        // Version 2's table: one tombstone per zone, no `purge` column.
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE old (zone_name TEXT NOT NULL, owner_name TEXT NOT NULL, reason TEXT NOT NULL,
                        seq INTEGER NOT NULL, PRIMARY KEY (zone_name, owner_name)) WITHOUT ROWID;
                    INSERT INTO old SELECT zone_name, owner_name, reason, seq FROM zone_tombstone;
                    DROP TABLE zone_tombstone;
                    ALTER TABLE old RENAME TO zone_tombstone;
                    CREATE INDEX zone_tombstone_by_seq ON zone_tombstone (seq);
                    DELETE FROM grdb_migrations WHERE identifier LIKE 'v3:%';
                    PRAGMA user_version = 2;
                    """)
        }
        try queue.close()

        let reopened = try SQLiteCloudDatabase(path: path)
        #expect(
            try await reopened.databaseChanges(since: token).deletions == [
                CloudZoneDeletion(zoneID: zone, reason: .purged), CloudZoneDeletion(zoneID: other, reason: .deleted),
            ])
        // The purge still refuses the zone, and now stays beside a later deletion.
        await #expect(throws: CloudDatabaseError.userDeletedZone(zone)) {
            _ = try await reopened.recordZoneChanges(inZoneWith: zone, since: nil)
        }
        _ = try await reopened.modifyRecordZones(saving: [zone], deleting: [])
        _ = try await reopened.modifyRecordZones(saving: [], deleting: [zone])
        #expect(
            try await reopened.databaseChanges(since: token).deletions == [
                CloudZoneDeletion(zoneID: zone, reason: .purged), CloudZoneDeletion(zoneID: other, reason: .deleted),
                CloudZoneDeletion(zoneID: zone, reason: .deleted),
            ])
        await #expect(throws: CloudDatabaseError.zoneNotFound(zone)) {
            _ = try await reopened.recordZoneChanges(inZoneWith: zone, since: nil)
        }
        try reopened.close()
        #expect(try Self.layout(of: path) == Self.currentLayout)
    }

    @Test func aNewFileRecordsEveryMigrationAndTheVersionEarlierReleasesRead() throws {
        let path = temporaryDatabasePath("new")
        try SQLiteCloudDatabase(path: path).close()
        #expect(try Self.layout(of: path) == Self.currentLayout)
    }

    /// What a file says of its layout: the migrations GRDB recorded, and `user_version`.
    private struct Layout: Equatable {
        var migrations: [String]
        var version: Int
    }

    private static let currentLayout = Layout(
        migrations: [
            "v1: zones, records, references, assets, versions", "v2: change log",
            "v3: a purge kept beside a later deletion of its zone",
        ], version: 3)

    private static func layout(of path: String) throws -> Layout {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { database in
            Layout(
                migrations: try String.fetchAll(database, sql: "SELECT identifier FROM grdb_migrations ORDER BY 1"),
                version: try Int.fetchOne(database, sql: "PRAGMA user_version") ?? 0)
        }
    }

    @Test func tombstonesAreBoundedAndATokenThatCouldMissOneIsExpired() async throws {
        let path = temporaryDatabasePath("bounded")
        let database = try SQLiteCloudDatabase(path: path, maximumTombstones: 10)
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        _ = try await database.saveRecords((0..<40).map { note("n\($0)") })
        let early = try await database.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        for index in 0..<30 {
            try await database.deleteRecord(withID: CloudRecord.ID(recordName: "n\(index)", zoneID: zone))
        }
        let late = try await database.recordZoneChanges(inZoneWith: zone, since: nil).changeToken

        let tombstones = try await DatabaseQueue(path: path).read {
            try Int.fetchOne($0, sql: "SELECT count(*) FROM record_tombstone") ?? -1
        }
        #expect(tombstones <= 10)
        await #expect(throws: CloudDatabaseError.changeTokenExpired(zone)) {
            _ = try await database.recordZoneChanges(inZoneWith: zone, since: early)
        }
        let current = try await database.recordZoneChanges(inZoneWith: zone, since: late)
        #expect(current.modifications.isEmpty && current.deletions.isEmpty)
        let everything = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
        #expect(Set(everything.modifications.map(\.id.recordName)) == Set((30..<40).map { "n\($0)" }))
        try database.close()
    }
}
