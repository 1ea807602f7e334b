import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer
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
        // Initial sync, against fetching the same pages and inserting the records with plain GRDB, batched: a
        // transaction a page, one prepared INSERT, one encoder.
        if wanted("sync.initial") {
            let source = try await server()
            var stores: [SyncStore] = []
            var pools: [DatabasePool] = []
            let times = try await slow.interleavedMedians([
                {
                    let store = try SyncStore(path: newPath())
                    blackHole(try await SyncEngine(store: store, database: source).sync())
                    stores.append(store)
                },
                {
                    let pool = try DatabasePool(path: newPath())
                    try await Self.plainInitialSync(from: source, into: pool)
                    pools.append(pool)
                },
            ])
            for store in stores {
                try BenchmarkCheck.count(
                    try await store.records(ofType: "Flat").count, large, "sync.initial", of: "records in the store")
            }
            for pool in pools {
                try BenchmarkCheck.count(
                    try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM record") ?? 0 }, large,
                    "sync.initial", of: "rows in the baseline's table")
            }
            results.append(
                BenchmarkResult(
                    name: "sync.initial", ours: times[0], baseline: "fetch + batched plain GRDB inserts",
                    baselineSeconds: times[1], target: 0.8, details: [("records", large)]))
        }

        // The initial sync with a reader of its progress, against the same sync without one: the engine publishes
        // per page and never waits for the reader, so the reader must cost the sync nothing it waits on.
        if wanted("sync.progress-observed") {
            let source = try await server()
            var lastUpdates: [SyncProgress] = []
            // Five turns each, not three, and stores in memory: the row's target is 5%, and a sync into files swings by
            // more than that from one turn to the next (the same sync on both sides, no reader: 0.90-1.04).
            let times = try await Harness(repetitions: 5, warmups: 0).interleavedMedians([
                {
                    let engine = SyncEngine(store: try SyncStore.inMemory(), database: source)
                    let progress = await engine.progress()
                    let reader = Task {
                        var last: [SyncProgress] = []
                        for await update in progress { last = [update] }
                        return last
                    }
                    blackHole(try await engine.sync())
                    await engine.close()
                    lastUpdates = await reader.value
                },
                { blackHole(try await SyncEngine(store: try SyncStore.inMemory(), database: source).sync()) },
            ])
            // The reader saw the sync to its end, every record counted.
            try BenchmarkCheck.same(
                lastUpdates.map { [$0.phase.rawValue, "\($0.recordsFetched)"] }, [["finished", "\(large)"]],
                "sync.progress-observed", baseline: "the sync's records")
            results.append(
                BenchmarkResult(
                    name: "sync.progress-observed", ours: times[0], baseline: "the same sync without a progress reader",
                    baselineSeconds: times[1], target: 1.05, details: [("records", large)]))
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
                blackHole(try await engine.sync())
            }
            try BenchmarkCheck.same(
                try await store.record(withID: Self.id(size / 2))?["title"], .string("changed \(round)"),
                "sync.one-change")
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
                for index in 0..<saves { blackHole(try await store.save(Self.model(index, round: saveRound))) }
            }
            var mappedRound = 0
            let mappedSave: () async throws -> Void = {
                mappedRound += 1
                for index in 0..<saves {
                    blackHole(try await mappedStore.save(MappedFlat(Self.model(index, round: mappedRound))))
                }
            }
            let pool = try DatabasePool(path: newPath())
            try await pool.write { try $0.execute(sql: "CREATE TABLE record (name TEXT PRIMARY KEY, body BLOB)") }
            var plainRound = 0
            let encoder = CKRecordEncoder(zoneID: SyncStore.defaultZoneID)
            let json = JSONEncoder()
            let plainSave: () async throws -> Void = {
                plainRound += 1
                for index in 0..<saves {
                    let rows = try encoder.encodeRecords(Self.model(index, round: plainRound)).map {
                        ($0.id.recordName, try json.encode($0))
                    }
                    try await pool.write { db in
                        let statement = try db.cachedStatement(
                            sql: "INSERT OR REPLACE INTO record (name, body) VALUES (?, ?)")
                        for (name, body) in rows { try statement.execute(arguments: [name, body]) }
                    }
                }
            }
            // One round of each, checked: the store and the table hold what was saved.
            try await localSave()
            try await plainSave()
            let saved = Self.model(saves - 1, round: 1)
            try BenchmarkCheck.same(try await store.fetch(Flat.self, id: saved.id), saved, "sync.local-save")
            let row = try await pool.read {
                try Data.fetchOne($0, sql: "SELECT body FROM record WHERE name = ?", arguments: [saved.id])
            }
            try BenchmarkCheck.same(
                try row.map { try JSONDecoder().decode(CloudRecord.self, from: $0).fields },
                try encoder.encodeRecords(saved).last?.fields, "sync.local-save", baseline: "plain GRDB")
            let withMapped = wanted("sync.local-save.mapped")
            let times = try await harness.interleavedMedians(
                withMapped ? [localSave, plainSave, mappedSave] : [localSave, plainSave])
            results.append(
                BenchmarkResult(
                    name: "sync.local-save", ours: times[0], baseline: "encode + plain GRDB, prepared",
                    baselineSeconds: times[1], target: 1.5, details: [("saves timed", saves)]))
            if withMapped {
                results.append(
                    BenchmarkResult(
                        name: "sync.local-save.mapped", ours: times[2], baseline: "encode + plain GRDB, prepared",
                        baselineSeconds: times[1], target: 2, details: [("saves timed", saves)]))
                results.append(
                    BenchmarkResult(
                        name: "sync.local-save.mapped", ours: times[2], baseline: "the Codable model",
                        baselineSeconds: times[0], target: .infinity))
            }
        }

        // Peak memory of the initial sync: bounded by the page size, not the record count. Both sizes after the
        // same small warm-up (code loaded, caches made), so neither reuses the other's heap; measured in bytes, with
        // no floor.
        var growth: [Int: Double] = [:]
        if wanted("sync.memory") {
            let warmup = try SyncStore(path: newPath())
            try await SyncEngine(store: warmup, database: try await Self.server(holding: small)).sync()
            for size in [sizes.syncMemorySmall, sizes.syncMemoryLarge] {
                let source = try await Self.server(holding: size)
                ResidentMemory.releaseFreedPages()
                let before = ResidentMemory.current() ?? 0
                ResidentMemory.resetPeak()
                let store = try SyncStore(path: newPath())
                blackHole(try await SyncEngine(store: store, database: source).sync())
                growth[size] = Double(max(0, (ResidentMemory.peak() ?? 0) - before))
                try BenchmarkCheck.count(
                    try await store.records(ofType: "Flat").count, size, "sync.memory", of: "records in the store")
            }
            results.append(
                BenchmarkResult(
                    name: "sync.memory", ours: growth[sizes.syncMemoryLarge] ?? 0,
                    baseline: "peak growth syncing \(sizes.syncMemorySmall)",
                    baselineSeconds: growth[sizes.syncMemorySmall] ?? 0, target: 1.2,
                    details: [
                        ("records", sizes.syncMemoryLarge),
                        ("peak growth bytes", Int(growth[sizes.syncMemoryLarge] ?? 0)),
                        ("baseline peak growth bytes", Int(growth[sizes.syncMemorySmall] ?? 0)),
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

    /// What an app would write by hand: fetch every page of changes, insert each page's records in a transaction
    /// through one prepared statement, with one encoder.
    private static func plainInitialSync(from server: InMemoryCloudDatabase, into pool: DatabasePool) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "CREATE TABLE record (zone TEXT, name TEXT, type TEXT, body BLOB, PRIMARY KEY (zone, name))")
        }
        let encoder = JSONEncoder()
        var token: CloudChangeToken?
        while true {
            let page = try await server.recordZoneChanges(inZoneWith: zone, since: token)
            let rows = try page.modifications.map { record in
                (record.id.recordName, record.recordType, try encoder.encode(record))
            }
            try await pool.write { db in
                let insert = try db.cachedStatement(
                    sql: "INSERT OR REPLACE INTO record (zone, name, type, body) VALUES (?, ?, ?, ?)")
                for (name, type, body) in rows { try insert.execute(arguments: [zone.zoneName, name, type, body]) }
            }
            token = page.changeToken
            if !page.moreComing { return }
        }
    }
}
