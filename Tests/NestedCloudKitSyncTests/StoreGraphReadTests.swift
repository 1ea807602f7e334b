import Foundation
import GRDB
import NestedCloudKitCodable
import Testing

@testable import NestedCloudKitSync

/// Models are read with the records they reference by following the rows their references hold: these are the
/// cases where a row could be missing or out of date, and the read must still be the records as the store has them.
@Suite("Store: reading graphs through references")
struct StoreGraphReadTests {
    private static let school = School(
        id: "s1", name: "Hill", director: Person(id: "d1", name: "Ada"),
        students: [Person(id: "p1", name: "Bo"), Person(id: "p2", name: "Cy")])

    private static func records(of school: School, in store: SyncStore) throws -> [CloudRecord] {
        try CKRecordEncoder(zoneID: store.zoneID).encodeRecords(school)
    }

    private static func id(_ name: String, in store: SyncStore) -> CloudRecord.ID {
        CloudRecord.ID(recordName: name, zoneID: store.zoneID)
    }

    /// Every reference's target row, by target name (`nil`: no row).
    private static func targetRows(in store: SyncStore) async throws -> [String: Int64?] {
        try await store.read { db in
            var rows: [String: Int64?] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT target_name, target_row FROM ncs_reference") {
                rows[row["target_name"]] = .some(row["target_row"])
            }
            return rows
        }
    }

    private static func row(of name: String, in store: SyncStore) async throws -> Int64? {
        try await store.read { db in
            try Int64.fetchOne(
                db, sql: "SELECT rowid FROM ncs_record WHERE record_name = ?", arguments: [name])
        }
    }

    @Test func referencesWrittenBeforeTheirTargetsFindThemWhenTheyArrive() async throws {
        let store = try SyncStore.inMemory()
        let records = try Self.records(of: Self.school, in: store)
        // The school first, its people in a later save.
        try await store.save(records.filter { $0.recordType == "School" })
        let none = Int64?.none
        #expect(try await Self.targetRows(in: store) == ["d1": none, "p1": none, "p2": none])
        try await store.save(records.filter { $0.recordType == "Person" })
        let rows = try await Self.targetRows(in: store)
        for name in ["d1", "p1", "p2"] { #expect(rows[name] == .some(try await Self.row(of: name, in: store))) }
        #expect(try await store.fetchAll(School.self) == [Self.school])
    }

    @Test func aTargetDeletedAndSavedAgainIsReadAsItIsNow() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Self.school)
        _ = try await store.deleteRecords(withIDs: [Self.id("p1", in: store)])
        #expect(try await Self.targetRows(in: store)["p1"] == .some(nil))
        try await store.save(Person(id: "p1", name: "Bo, renamed"))
        var expected = Self.school
        expected.students[0].name = "Bo, renamed"
        #expect(try await store.fetchAll(School.self) == [expected])
        #expect(try await Self.targetRows(in: store)["p1"] == .some(try await Self.row(of: "p1", in: store)))
    }

    @Test func aRowNumberGivenAgainDoesNotLeadAReferenceToAnotherRecord() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Self.school)
        // A student deleted and saved again is the newest row; it goes, and SQLite gives its number to the next
        // record.
        _ = try await store.deleteRecords(withIDs: [Self.id("p2", in: store)])
        try await store.save(Person(id: "p2", name: "Cy"))
        let freed = try #require(try await Self.row(of: "p2", in: store))
        let newest = try await store.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(rowid) FROM ncs_record") }
        #expect(newest == freed)
        _ = try await store.deleteRecords(withIDs: [Self.id("p2", in: store)])
        try await store.save(Note(id: "n1", title: "Unrelated", body: ""))
        #expect(try await Self.row(of: "n1", in: store) == freed)
        #expect(try await Self.targetRows(in: store)["p2"] == .some(nil))
        // The school reads as it would have: it references a record the store doesn't have.
        let error = try await #require(throws: CKCodableError.self) { try await store.fetchAll(School.self) }
        #expect(error.code == .missingRecord)
        #expect(error.referencedRecordID == Self.id("p2", in: store))
    }

    /// As references whose rows were never filled in would be: the read doesn't depend on the rows. With some
    /// rows, those records come through them and again by name with the rest, and are taken once.
    @Test(arguments: ["", "WHERE target_name = 'p1'"])
    func referencesWithoutRowsAreReadByName(missing: String) async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Self.school)
        try await store.write { db in try db.execute(sql: "UPDATE ncs_reference SET target_row = NULL \(missing)") }
        #expect(try await store.fetchAll(School.self) == [Self.school])
    }

    @Test func aRecordSeveralModelsReferenceIsReadOnceForEach() async throws {
        let store = try SyncStore.inMemory()
        var other = Self.school
        other.id = "s2"
        other.students = [Self.school.students[1]]
        try await store.save(Self.school)
        try await store.save(other)
        #expect(try await store.fetchAll(School.self) == [Self.school, other])
    }

    @Test func aStoreOfTheThirdLayoutGetsItsReferencesRows() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("graph-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        // A file as the third layout left it: rows and references by name only.
        let zone = SyncStore.defaultZoneID
        let records = try CKRecordEncoder(zoneID: zone).encodeRecords(Self.school)
        let queue = try DatabaseQueue(path: path)
        try StoreSchema.migrator().migrate(queue, upTo: "v3: binary records, queryable fields, earlier server copies")
        try await queue.write { db in
            for record in records {
                try db.execute(
                    sql: """
                        INSERT INTO ncs_record (zone_owner, zone_name, record_name, record_type, record, edit_time,
                            field_edit_times, version)
                        VALUES (?, ?, ?, ?, ?, 1, x'', 1)
                        """,
                    arguments: [
                        zone.ownerName, zone.zoneName, record.id.recordName, record.recordType,
                        RecordCoding.encode(record),
                    ])
                for (field, value) in record.fields {
                    for reference in value.references {
                        try db.execute(
                            sql: """
                                INSERT INTO ncs_reference (holder_zone_owner, holder_zone_name, holder_name, field,
                                    action, target_zone_owner, target_zone_name, target_name)
                                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                                """,
                            arguments: [
                                zone.ownerName, zone.zoneName, record.id.recordName, field,
                                reference.action.rawValue, zone.ownerName, zone.zoneName,
                                reference.recordID.recordName,
                            ])
                    }
                }
            }
        }
        try queue.close()
        let store = try SyncStore(path: path)
        let rows = try await Self.targetRows(in: store)
        #expect(rows.count == 3)
        for name in ["d1", "p1", "p2"] { #expect(rows[name] == .some(try await Self.row(of: name, in: store))) }
        let holders = try await store.read { db in
            try Int64.fetchSet(db, sql: "SELECT holder_row FROM ncs_reference")
        }
        #expect(holders == [try #require(try await Self.row(of: "s1", in: store))])
        #expect(try await store.fetchAll(School.self) == [Self.school])
        try await store.close()
    }
}
