import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

@testable import NestedCloudKitSync

/// Each record type's table: a column per field, read by models without their records, readable (and only
/// readable) by an app's own SQL.
@Suite("Store: a table per record type")
struct StoreTableTests {
    private static func note(_ id: String, _ title: String, pinned: Bool = false) -> Note {
        Note(id: id, title: title, body: "body of \(id)", pinned: pinned)
    }

    @Test func eachRecordTypeHasATableWithAColumnPerFieldAndItsRecordsRows() async throws {
        let clock = VirtualCloudClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let store = try SyncStore.inMemory(clock: clock)
        try await store.save(Self.note("a", "First"))
        try await store.save(Self.note("b", "Second", pinned: true))
        let (columns, rows) = try await store.read { db in
            (
                try Row.fetchAll(db, sql: "PRAGMA table_info(\"Note\")").map { [$0["name"], $0["type"]] as [String] },
                // Each value as SQL writes it: its type shows.
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT quote(_record_name), quote(title), quote(pinned), quote(body), quote(_inexact),
                            quote(_created_at)
                        FROM "Note" ORDER BY _record_name
                        """
                ).map { row in (0..<6).map { row[$0] as String } }
            )
        }
        #expect(
            columns == [
                ["_record_row", "INTEGER"], ["_zone_key", "INTEGER"], ["_record_name", "TEXT"],
                ["_created_at", "REAL"], ["_modified_at", "REAL"], ["_inexact", "INTEGER"], ["id", "TEXT"],
                ["title", "TEXT"], ["body", "TEXT"], ["pinned", "INTEGER"],
            ])
        #expect(
            rows == [
                ["'a'", "'First'", "0", "'body of a'", "0", "1800000000.0"],
                // Edit times never repeat: the second save is a millisecond later.
                ["'b'", "'Second'", "1", "'body of b'", "0", "1800000000.001"],
            ])

        // A change rewrites the row; a deletion removes it with the record.
        try await store.save(Self.note("a", "First, edited"))
        try await store.delete(Note.self, id: "b")
        let after = try await store.read { db in
            try Row.fetchAll(db, sql: "SELECT _record_name, title FROM \"Note\" ORDER BY _record_name").map {
                [$0[0], $0[1]] as [String]
            }
        }
        #expect(after == [["a", "First, edited"]])
    }

    @Test func aFlatModelIsReadFromItsRowWithoutItsRecord() async throws {
        let store = try SyncStore.inMemory()
        for index in 0..<3 { try await store.save(Self.note("n\(index)", "Note \(index)", pinned: index == 1)) }
        // The records' bytes made unreadable: what still reads, reads the rows alone.
        try await store.write { db in try db.execute(sql: "UPDATE ncs_record SET record = x'00'") }
        #expect(try await store.fetchAll(Note.self).map(\.title) == ["Note 0", "Note 1", "Note 2"])
        #expect(try await store.fetch(Note.self, id: "n1") == Self.note("n1", "Note 1", pinned: true))
        let pinned = ModelQuery(QueryableNote.self).recordType("Note").filter(.equals(.pinned, true))
        #expect(try await store.fetch(pinned).map(\.id) == ["n1"])
        #expect(try await store.count(pinned) == 1)
        await #expect(throws: (any Error).self) { try await store.records(ofType: "Note") }
    }

    @Test func aFieldItsColumnCantHoldIsReadFromTheRecordExactlyAsBefore() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Self.note("a", "A string title"))
        // Another client wrote a number where this type has strings: the column can't hold it.
        var odd = CloudRecord(recordType: "Note", id: CloudRecord.ID(recordName: "b", zoneID: store.zoneID))
        odd["title"] = .int64(7)
        odd["body"] = .string("")
        try await store.save([odd])
        let marked = try await store.read { db in
            try Row.fetchAll(
                db, sql: "SELECT quote(_record_name), quote(_inexact), quote(title) FROM \"Note\" ORDER BY _record_name"
            ).map { [$0[0], $0[1], $0[2]] as [String] }
        }
        #expect(marked == [["'a'", "0", "'A string title'"], ["'b'", "1", "NULL"]])
        // The read says what the record's decoder says: the field, its record, what it found.
        let expected = #expect(throws: CKCodableError.self) { try CKRecordDecoder().decode(Note.self, from: odd) }
        let thrown = await #expect(throws: CKCodableError.self) { try await store.fetchAll(Note.self) }
        #expect(thrown?.description == expected?.description)
    }

    @Test func aDateWhoseSecondsDontGiveItBackIsReadFromTheRecord() async throws {
        // A date of more precision than a double of seconds since 1970 holds: the column can't give it back.
        var seed = Date(timeIntervalSinceReferenceDate: 123_456_789.000_000_1)
        while Date(timeIntervalSince1970: seed.timeIntervalSince1970) == seed {
            seed = Date(timeIntervalSinceReferenceDate: seed.timeIntervalSinceReferenceDate.nextUp)
        }
        let store = try SyncStore.inMemory()
        let value = FlatModel(id: "f", text: "", number: 0, flag: false, real: 0, date: seed, bytes: Data())
        try await store.save(value)
        var record = try #require(
            try await store.record(withID: CloudRecord.ID(recordName: "f", zoneID: store.zoneID)))
        record["date"] = .date(seed)
        try await store.save([record])
        let inexact = try await store.read { db in try Int.fetchOne(db, sql: "SELECT _inexact FROM \"FlatModel\"") }
        #expect(inexact == 1)
        // What the record's decoder reads from the record, not what the column holds.
        let stored = try #require(try await store.record(withID: record.id))
        let expected = try CKRecordDecoder().decode(FlatModel.self, from: stored)
        #expect(expected.date == seed)
        #expect(try await store.fetchAll(FlatModel.self) == [expected])
        #expect(try await store.fetch(FlatModel.self, id: "f") == expected)
    }

    @Test func anotherConnectionReadsTheTablesAndCantWriteThem() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tables-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let store = try SyncStore(path: path)
        try await store.save(Self.note("a", "Kept"))
        let app = try DatabaseQueue(path: path)
        // Read and joined with plain SQL, as an app or DB Browser for SQLite reads them.
        let joined = try await app.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT "Note".title || ' in ' || ncs_zone_key.zone_name FROM "Note"
                    JOIN ncs_zone_key ON ncs_zone_key.key = "Note"._zone_key
                    """)
        }
        #expect(joined == ["Kept in NestedCloudKitSync"])
        for sql in [
            "UPDATE \"Note\" SET title = 'behind its back'",
            "DELETE FROM \"Note\"",
            "INSERT INTO \"Note\" (_record_row, _zone_key, _record_name) VALUES (99, 1, 'x')",
        ] {
            let error = #expect(throws: DatabaseError.self, "\(sql)") { try app.write { try $0.execute(sql: sql) } }
            #expect(error?.message?.contains(StoreWriteGuard.functionName) == true, "\(String(describing: error))")
        }
        try app.close()
        #expect(try await store.fetchAll(Note.self) == [Self.note("a", "Kept")])
        #expect(try await store.pendingChanges().map(\.recordID.recordName) == ["a"])
        try await store.close()
    }

    @Test func aTypeWhoseNameAnAppsTableHasGetsAPrefixedTable() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tables-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let app = try DatabaseQueue(path: path)
        try await app.write { try $0.execute(sql: "CREATE TABLE note (appColumn TEXT)") }
        try app.close()
        let store = try SyncStore(path: path)
        try await store.save(Self.note("a", "Mine"))
        let tables = try await store.read { db in
            try Row.fetchAll(db, sql: "SELECT record_type, table_name FROM ncs_table").map {
                [$0[0], $0[1]] as [String]
            }
        }
        #expect(tables == [["Note", "ncs_type_Note"]])
        #expect(try await store.fetchAll(Note.self).map(\.title) == ["Mine"])
        #expect(
            try await store.fetch(ModelQuery(QueryableNote.self).recordType("Note").filter(.equals(.pinned, false)))
                .map(\.id) == ["a"])
        try await store.close()
    }

    /// Names are quoted byte by byte: a quote followed by a combining mark is one `Character` to Swift and still a
    /// quote to SQLite, and a name with both quotes makes a table, triggers and statements that work.
    @Test func aRecordTypeWithQuotesInItsNameGetsItsOwnTableAndReads() async throws {
        let store = try SyncStore.inMemory()
        let recordType = "Odd\"\u{301}Ty'pe"
        var record = CloudRecord(recordType: recordType, id: CloudRecord.ID(recordName: "a", zoneID: store.zoneID))
        record["title"] = .string("Quoted")
        record["body"] = .string("b")
        record["pinned"] = .int64(1)
        try await store.save([record])
        let tables = try await store.read { db in
            try Row.fetchAll(db, sql: "SELECT record_type, table_name FROM ncs_table").map {
                [$0[0], $0[1]] as [String]
            }
        }
        #expect(tables == [[recordType, recordType]])
        #expect(
            try await store.fetchAll(Note.self, recordType: recordType) == [
                Note(id: "a", title: "Quoted", body: "b", pinned: true)
            ])
        #expect(
            try await store.fetch(ModelQuery(QueryableNote.self).recordType(recordType).filter(.equals(.pinned, true)))
                .map(\.id) == ["a"])
        // The triggers name the type as a literal: its deletion takes its row.
        _ = try await store.deleteRecords(withIDs: [record.id])
        let rows = try await store.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(StoreSQL.identifier(recordType))")
        }
        #expect(rows == 0)
    }

    @Test func aValueObservationOfATableSeesWhatTheEngineFetches() async throws {
        let scenario = Scenario()
        let other = try await scenario.device()
        let device = try await scenario.device()
        try await device.store.save(Self.note("mine", "Mine"))
        try await device.sync()
        let titles = ValueObservation.tracking { db in
            try String.fetchAll(db, sql: "SELECT title FROM \"Note\" ORDER BY _record_name")
        }.removeDuplicates().values(in: device.store.database)
        var iterator = titles.makeAsyncIterator()
        #expect(try await iterator.next() == ["Mine"])
        try await other.store.save(Self.note("theirs", "Theirs"))
        try await other.sync()
        try await device.sync()
        #expect(try await iterator.next() == ["Mine", "Theirs"])
        // The reader reads; it can't write.
        await #expect(throws: (any Error).self) {
            try await device.store.database.read { db in try db.execute(sql: "DELETE FROM \"Note\"") }
        }
    }
}

/// A flat model of every type a row holds exactly.
struct FlatModel: CKCodable, Identifiable, Equatable, Sendable, QueryableModel {
    enum Mood: String, Codable, Sendable, CaseIterable { case calm, busy, 日本 }

    var id: String
    var text: String
    var number: Int
    var flag: Bool
    var real: Double
    var date: Date
    var bytes: Data
    var optionalText: String? = nil
    var optionalNumber: Int64? = nil
    var optionalDate: Date? = nil
    var small: UInt8 = 0
    var mood: Mood = .calm
    var optionalMood: Mood? = nil

    enum CodingKeys: String, CodingKey {
        case id, text, number, flag, real, date, bytes, optionalText, optionalNumber, optionalDate, small, mood
        case optionalMood
    }
}
