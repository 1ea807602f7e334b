import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite
import NestedCloudKitServer
import NestedCloudKitSync
import Testing

/// Writes the files of `Fixtures/store-v6`: a store of the sixth layout and the SQLite server it syncs with, made by
/// the code of that layout (commit 66d952f), which ``StoreMigrationTests`` opens with today's.
///
/// It runs only when `NCKS_WRITE_STORE_FIXTURE` names a folder; run today, it writes files of today's layout.
/// What the store holds:
/// - notes `n1`...`n4` synced; `n1` changed three times by another device (earlier server copies), the last time
///   by a newer app version that added a field `color` this version's `Note` doesn't know;
/// - `hidden`, another device's note this device couldn't read (skipped);
/// - pending: `n1` edited after the newer version's change, `n2` deleted, `n-new` created;
/// - the database's and the zone's change tokens.
@Suite("Store: the v6 fixture's writer")
struct StoreFixtureWriter {
    static let folder = ProcessInfo.processInfo.environment["NCKS_WRITE_STORE_FIXTURE"]

    @Test(.enabled(if: folder != nil)) func writeTheFixture() async throws {
        let folder = try #require(Self.folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let clock = VirtualCloudClock(start: Date(timeIntervalSince1970: 1_790_000_000))
        let server = try SQLiteCloudDatabase(path: folder + "/server.sqlite", clock: clock)
        let flaky = FlakyDatabase(server)
        let configuration = SyncConfiguration(retry: SyncRetryPolicy(jitter: 0))
        let device = try await Device(
            server: flaky, clock: clock, path: folder + "/store.sqlite", configuration: configuration)
        let other = try await Device(server: server, clock: clock, configuration: configuration)

        for index in 1...4 {
            try await device.store.save(Note(id: "n\(index)", title: "Note \(index)", body: "first"))
        }
        try await device.sync()
        try await other.sync()
        for round in 1...2 {
            try await other.store.save(Note(id: "n1", title: "Note 1, round \(round)", body: "first"))
            try await other.sync()
            clock.advance(by: .seconds(60))
            try await device.sync()
        }
        // A newer app version adds a field, and another device writes a note this one can't read.
        try await other.store.save(
            NewerNote(id: "n1", title: "Note 1, newer", body: "first", pinned: false, color: "teal"))
        try await other.store.save(Note(id: "hidden", title: "Unreadable here", body: ""))
        try await other.sync()
        await flaky.setUnreadable([CloudRecord.ID(recordName: "hidden", zoneID: device.store.zoneID)])
        clock.advance(by: .seconds(60))
        try await device.sync()

        clock.advance(by: .seconds(60))
        var edited = try #require(try await device.store.fetch(Note.self, id: "n1"))
        edited.body = "edited offline"
        try await device.store.save(edited)
        try await device.store.delete(Note.self, id: "n2")
        try await device.store.save(Note(id: "n-new", title: "Not sent yet", body: "é ✓"))
        try await device.store.close()
        try server.close()
    }
}

/// `Note` as a newer app version declares it, with a field this version doesn't know.
struct NewerNote: CKCodable, Identifiable, Sendable {
    var id: String
    var title: String
    var body: String
    var pinned: Bool
    var color: String
    var cloudKitRecordType: String { "Note" }
}
