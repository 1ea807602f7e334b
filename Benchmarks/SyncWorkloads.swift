import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitSync

extension Workloads {
    // MARK: Sync

    /// The sync engine against plain GRDB and against itself at another size: the initial sync of a zone, a sync
    /// that brings one change into a small and a large store, a local save, and the initial sync's peak memory.
    func sync(only wanted: (String) -> Bool) async throws -> [BenchmarkResult] {
        let files = try TemporaryFiles(prefix: "ncks-bench")
        // Kept to the end: the stores opened in the folder must not lose it while they run.
        defer { withExtendedLifetime(files) {} }
        func newPath() -> String { files.newPath() }
        let large = sizes.syncRecords
        let small = max(1, large / 100)
        // Few repetitions: one initial sync of the large zone takes seconds.
        let slow = Harness(repetitions: 3, warmups: 0)
        var results: [BenchmarkResult] = []

        // Made once, and only if a workload needs it: filling it takes seconds.
        var largeServer: InMemoryCloudDatabase?
        func server() async throws -> InMemoryCloudDatabase {
            if let largeServer { return largeServer }
            let made = try await Self.server(holding: large)
            largeServer = made
            return made
        }
        // Initial sync, against fetching the same pages and inserting the records with plain GRDB.
        if wanted("sync.initial") {
            let ours = try await slow.median {
                let store = try SyncStore(path: newPath())
                try await SyncEngine(store: store, database: try await server()).sync()
            }
            let baseline = try await slow.median {
                try await Self.plainInitialSync(from: try await server(), into: try DatabasePool(path: newPath()))
            }
            results.append(
                BenchmarkResult(
                    name: "sync.initial", ours: ours, baseline: "fetch + plain GRDB inserts", baselineSeconds: baseline,
                    target: 2, details: [("records", large)]))
        }

        // One change into a store of `large` records, against the same into a store of `small`.
        var oneChange: [Int: Double] = [:]
        for size in [small, large] where wanted("sync.one-change") {
            let source = size == large ? try await server() : try await Self.server(holding: size)
            let store = try SyncStore(path: newPath())
            let engine = SyncEngine(store: store, database: source)
            try await engine.sync()
            var round = 0
            oneChange[size] = try await harness.median {
                round += 1
                var record = try await source.record(for: Self.id(size / 2))
                record["title"] = .string("changed \(round)")
                _ = try await source.save(record)
                try await engine.sync()
            }
        }
        if wanted("sync.one-change") {
            results.append(
                BenchmarkResult(
                    name: "sync.one-change", ours: oneChange[large] ?? 0, baseline: "the same into a store of \(small)",
                    baselineSeconds: oneChange[small] ?? 0, target: 1.5,
                    details: [("records in the large store", large)]))
        }

        // A local save, against encoding the model and writing its row with plain GRDB.
        if wanted("sync.local-save") {
            let saves = 500
            let store = try SyncStore(path: newPath())
            let mappedStore = try SyncStore(path: newPath())
            var saveRound = 0
            let localSave: () async throws -> Void = {
                saveRound += 1
                for index in 0..<saves { try await store.save(Self.model(index, round: saveRound)) }
            }
            var mappedRound = 0
            let mappedSave: () async throws -> Void = {
                mappedRound += 1
                for index in 0..<saves { try await mappedStore.save(MappedFlat(Self.model(index, round: mappedRound))) }
            }
            let pool = try DatabasePool(path: newPath())
            try await pool.write { try $0.execute(sql: "CREATE TABLE record (name TEXT PRIMARY KEY, body BLOB)") }
            var plainRound = 0
            let plainSave: () async throws -> Void = {
                plainRound += 1
                for index in 0..<saves {
                    let records = try CKRecordEncoder(zoneID: SyncStore.defaultZoneID).encodeRecords(
                        Self.model(index, round: plainRound))
                    let rows = try records.map { ($0.id.recordName, try JSONEncoder().encode($0)) }
                    try await pool.write { db in
                        for (name, body) in rows {
                            try db.execute(
                                sql: "INSERT OR REPLACE INTO record (name, body) VALUES (?, ?)",
                                arguments: [name, body])
                        }
                    }
                }
            }
            let withMapped = wanted("sync.local-save.mapped")
            let times = try await harness.interleavedMedians(
                withMapped ? [localSave, plainSave, mappedSave] : [localSave, plainSave])
            results.append(
                BenchmarkResult(
                    name: "sync.local-save", ours: times[0], baseline: "encode + plain GRDB write",
                    baselineSeconds: times[1], target: 2, details: [("saves timed", saves)]))
            if withMapped {
                results.append(
                    BenchmarkResult(
                        name: "sync.local-save.mapped", ours: times[2], baseline: "encode + plain GRDB write",
                        baselineSeconds: times[1], target: 2, details: [("saves timed", saves)]))
                results.append(
                    BenchmarkResult(
                        name: "sync.local-save.mapped", ours: times[2], baseline: "the Codable model",
                        baselineSeconds: times[0], target: .infinity))
            }
        }

        // Peak memory of the initial sync: bounded by the page size, not the record count.
        // Both sizes after the same small warm-up (code loaded, caches made), so neither reuses the other's heap.
        var growth: [Int: Double] = [:]
        if wanted("sync.memory") {
            let warmup = try SyncStore(path: newPath())
            try await SyncEngine(store: warmup, database: try await Self.server(holding: small)).sync()
        }
        for size in [small * 10, large] where wanted("sync.memory") {
            let source = size == large ? try await server() : try await Self.server(holding: size)
            ResidentMemory.releaseFreedPages()
            let before = ResidentMemory.current() ?? 0
            ResidentMemory.resetPeak()
            let store = try SyncStore(path: newPath())
            try await SyncEngine(store: store, database: source).sync()
            growth[size] = Double(max(0, (ResidentMemory.peak() ?? 0) - before))
        }
        // Growth below a megabyte is the allocator reusing freed pages, not the sync: counted as a megabyte, so
        // that the ratio compares sizes, not noise.
        let floor = Double(1 << 20)
        if wanted("sync.memory") {
            results.append(
                BenchmarkResult(
                    name: "sync.memory", ours: max(floor, growth[large] ?? 0),
                    baseline: "peak growth syncing \(small * 10)", baselineSeconds: max(floor, growth[small * 10] ?? 0),
                    target: 1.5,
                    details: [
                        ("records", large), ("peak growth bytes", Int(growth[large] ?? 0)),
                        ("baseline peak growth bytes", Int(growth[small * 10] ?? 0)),
                    ]))
        }
        return results
    }

    private static let zone = SyncStore.defaultZoneID

    private static func id(_ index: Int) -> CloudRecord.ID {
        CloudRecord.ID(recordName: "flat-\(index)", zoneID: zone)
    }

    private static func model(_ index: Int, round: Int) -> Flat {
        var flat = Flat.make(index)
        flat.title = "Title \(index), round \(round)"
        return flat
    }

    /// A server holding `count` records in the sync engine's zone.
    private static func server(holding count: Int) async throws -> InMemoryCloudDatabase {
        let server = InMemoryCloudDatabase()
        _ = try await server.modifyRecordZones(saving: [zone], deleting: [])
        try await server.saveRecords((0..<count).map { Flat.make($0).makeRecord(zoneID: zone) })
        return server
    }

    /// What an app would write by hand: fetch every page of changes, insert each page's records in a transaction.
    private static func plainInitialSync(from server: InMemoryCloudDatabase, into pool: DatabasePool) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "CREATE TABLE record (zone TEXT, name TEXT, type TEXT, body BLOB, PRIMARY KEY (zone, name))")
        }
        var token: CloudChangeToken?
        while true {
            let page = try await server.recordZoneChanges(inZoneWith: zone, since: token)
            let rows = try page.modifications.map { record in
                (record.id.recordName, record.recordType, try JSONEncoder().encode(record))
            }
            try await pool.write { db in
                for (name, type, body) in rows {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO record (zone, name, type, body) VALUES (?, ?, ?, ?)",
                        arguments: [zone.zoneName, name, type, body])
                }
            }
            token = page.changeToken
            if !page.moreComing { return }
        }
    }
}
