import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite

extension Workloads {
    // MARK: Sharing on the SQLite server

    /// What keeping a participant's shared database up to date costs the owner: single edits to a list shared with
    /// bob on the SQLite server (each refreshing his copy), against the same edits to an unshared file.
    ///
    /// The target follows from the design: each edit is the owner's transaction plus one for the copy, each with
    /// its reads; so about 2.5 times the edit alone at best, and at most 5 for one viewer. Recomputing the copy
    /// from the whole zone instead costs the size of the zone (260 times, for 1,000 items).
    func sharedSave() async throws -> [BenchmarkResult] {
        let itemCount = min(sizes.sqliteRecords, 1_000)
        let editCount = 50
        let lists = CloudRecord.ZoneID(zoneName: "Lists")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nckc-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let list = CloudRecord(recordType: "List", id: CloudRecord.ID(recordName: "list", zoneID: lists))
        let items = (0..<itemCount).map { index in
            var item = Flat.make(index).makeRecord(zoneID: lists)
            item.parentID = list.id
            return item
        }

        let server = try SQLiteCloudServer(directory: directory.appendingPathComponent("server").path)
        let alice = try server.privateDatabase(of: "_alice")
        _ = try await alice.modifyRecordZones(saving: [lists], deleting: [])
        var share = try CloudShare(rootRecord: list)
        try share.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        let saved = try await alice.modifyRecords(
            saving: [list, share.record], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        guard let shortGUID = try CloudShare(record: try saved.saveResults[share.id]?.get() ?? share.record).shortGUID
        else { return [] }
        _ = try await server.sharedDatabase(of: "_bob").acceptShare(shortGUID: shortGUID)
        try await alice.saveRecords(items)

        let unshared = try SQLiteCloudDatabase(path: directory.appendingPathComponent("unshared.sqlite").path)
        _ = try await unshared.modifyRecordZones(saving: [lists], deleting: [])
        try await unshared.saveRecords([list] + items)

        var round = 0
        func edits() -> [CloudRecord] {
            round += 1
            return (0..<editCount).map { index in
                var item = items[(index * 17 + round) % items.count]
                item["title"] = .string("edited \(round)")
                return item
            }
        }
        let times = try await harness.interleavedMedians([
            { for item in edits() { blackHole(try await alice.save(item, savePolicy: .changedKeys)) } },
            { for item in edits() { blackHole(try await unshared.save(item, savePolicy: .changedKeys)) } },
        ])
        let (shared, plain) = (times[0], times[1])
        // Bob's copy holds alice's last edit.
        let edited = edits()
        for item in edited { _ = try await alice.save(item, savePolicy: .changedKeys) }
        let bobsZone = CloudRecord.ZoneID(zoneName: lists.zoneName, ownerName: "_alice")
        let bobs = try await server.sharedDatabase(of: "_bob").record(
            for: CloudRecord.ID(recordName: edited[0].id.recordName, zoneID: bobsZone))
        try BenchmarkCheck.same(bobs["title"], edited[0]["title"], "sqlite.shared-save", baseline: "bob's copy")
        try await server.close()
        try unshared.close()
        return [
            BenchmarkResult(
                name: "sqlite.shared-save", ours: shared, baseline: "the same saves, unshared", baselineSeconds: plain,
                target: 5.0, details: [("items in the shared list", itemCount), ("single-record saves", editCount)])
        ]
    }
}
