import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer
import NestedCloudKitSync

extension Workloads {
    // MARK: Store reads

    /// The store as an app reads it, against plain GRDB tables of the same rows in the same run: every model of
    /// a type, a graph, a screen's query on a declared index, a count, an observation and reads by ID.
    ///
    /// Each row's target is against the strongest baseline, rows decoded by hand from cached statements
    /// (``HandWrittenRows``); GRDB's `Codable` records, what most apps write, are a second baseline, for scale.
    func store(only wanted: (String) -> Bool) async throws -> [BenchmarkResult] {
        let files = try TemporaryFiles(prefix: "ncks-store")
        // Kept to the end: the stores opened in the folder must not lose it while they run.
        defer { withExtendedLifetime(files) {} }
        func newPath() -> String { files.newPath() }
        let small = sizes.storeSmall
        let large = sizes.storeLarge
        let slow = Harness(repetitions: 5, warmups: 1)
        var results: [BenchmarkResult] = []

        // Made once each, and only if a workload needs them: filling the large ones takes seconds.
        var stores: [Int: (SyncStore, DatabasePool)] = [:]
        func notes(_ count: Int) async throws -> (SyncStore, DatabasePool) {
            if let made = stores[count] { return made }
            let made = (
                try await Self.store(notes: count, path: newPath()), try await Self.plain(notes: count, path: newPath())
            )
            stores[count] = made
            return made
        }
        func rows(_ name: String, _ times: [Double], target: Double, details: [(String, Int)]) -> [BenchmarkResult] {
            [
                BenchmarkResult(
                    name: name, ours: times[0], baseline: "GRDB, rows by hand, cached", baselineSeconds: times[1],
                    target: target, details: details),
                BenchmarkResult(
                    name: name, ours: times[0], baseline: "GRDB Codable records", baselineSeconds: times[2],
                    target: .infinity),
            ]
        }

        if wanted("store.fetch-all") {
            var ours: [Int: Double] = [:]
            for count in [small, large] {
                let (store, pool) = try await notes(count)
                let expected = (0..<count).map(StoreNote.make).sorted { $0.id < $1.id }
                try BenchmarkCheck.same(try await store.fetchAll(StoreNote.self), expected, "store.fetch-all")
                try BenchmarkCheck.same(
                    try await pool.read(HandWrittenRows.allNotes), expected, "store.fetch-all", baseline: "rows by hand"
                )
                try BenchmarkCheck.same(
                    try await pool.read { try PlainNote.order(Column("id")).fetchAll($0) },
                    expected.map(PlainNote.init),
                    "store.fetch-all", baseline: "Codable records")
                let times = try await (count == large ? slow : harness).interleavedMedians([
                    { blackHole(try await store.fetchAll(StoreNote.self)) },
                    { blackHole(try await pool.read(HandWrittenRows.allNotes)) },
                    { blackHole(try await pool.read { try PlainNote.order(Column("id")).fetchAll($0) }) },
                ])
                ours[count] = times[0]
                results += rows(
                    count == small ? "store.fetch-all" : "store.fetch-all.large", times, target: 1.3,
                    details: [("models", count)])
            }
            if wanted("store.fetch-all.mapped") {
                let (store, pool) = try await notes(small)
                let read = { try await store.fetchAll(MappedStoreNote.self, recordType: "StoreNote") }
                try BenchmarkCheck.same(
                    try await read(), try await pool.read(HandWrittenRows.allNotes).map(MappedStoreNote.init),
                    "store.fetch-all.mapped", baseline: "rows by hand")
                let times = try await harness.interleavedMedians([
                    { blackHole(try await read()) },
                    { blackHole(try await pool.read(HandWrittenRows.allNotes)) },
                ])
                results.append(
                    BenchmarkResult(
                        name: "store.fetch-all.mapped", ours: times[0], baseline: "GRDB, rows by hand, cached",
                        baselineSeconds: times[1], target: 1.15, details: [("models", small)]))
            }
            results.append(
                BenchmarkResult(
                    name: "store.fetch-all.linear", ours: ours[large] ?? 0, baseline: "ours reading \(small)",
                    baselineSeconds: ours[small] ?? 0, target: Double(large / small) * 1.05,
                    details: [("models", large)]))
        }

        if wanted("store.fetch-graph") {
            let parents = sizes.storeParents
            let (store, pool) = try await Self.graph(parents: parents, paths: newPath(), newPath())
            let expected = (0..<parents).map(StoreFolder.make).sorted { $0.id < $1.id }
            let codable: () async throws -> [StoreFolder] = {
                try await pool.read { db -> [StoreFolder] in
                    let files = Dictionary(
                        grouping: try PlainFile.order(Column("position")).fetchAll(db), by: \.folderID)
                    return try PlainFolder.order(Column("id")).fetchAll(db).map { folder in
                        StoreFolder(
                            id: folder.id, name: folder.name,
                            files: (files[folder.id] ?? []).map { StoreFile(id: $0.id, name: $0.name, size: $0.size) })
                    }
                }
            }
            try BenchmarkCheck.same(try await store.fetchAll(StoreFolder.self), expected, "store.fetch-graph")
            try BenchmarkCheck.same(
                try await pool.read(HandWrittenRows.folders), expected, "store.fetch-graph", baseline: "rows by hand")
            try BenchmarkCheck.same(try await codable(), expected, "store.fetch-graph", baseline: "Codable records")
            let withMapped = wanted("store.fetch-graph.mapped")
            let mapped = { try await store.fetchAll(MappedStoreFolder.self, recordType: "StoreFolder") }
            if withMapped {
                try BenchmarkCheck.same(
                    try await mapped(), expected.map(MappedStoreFolder.init), "store.fetch-graph.mapped")
            }
            let bodies: [() async throws -> Void] = [
                { blackHole(try await store.fetchAll(StoreFolder.self)) },
                { blackHole(try await pool.read(HandWrittenRows.folders)) },
                { blackHole(try await codable()) },
            ]
            let times = try await harness.interleavedMedians(
                withMapped ? bodies + [{ blackHole(try await mapped()) }] : bodies)
            let details = [("parents", parents), ("children", parents * 10)]
            results += rows("store.fetch-graph", times, target: 1.5, details: details)
            if withMapped {
                results.append(
                    BenchmarkResult(
                        name: "store.fetch-graph.mapped", ours: times[3], baseline: "GRDB, rows by hand, cached",
                        baselineSeconds: times[1], target: 1.3, details: details))
            }
        }

        let screen = ModelQuery(StoreNote.self).filter(.equals(.isDone, false)).sorted(by: .descending(.created))
            .limit(50)
        let codableScreen = PlainNote.filter(Column("isDone") == false).order(Column("created").desc).limit(50)

        if wanted("store.query") {
            let few = max(1, small / 10)
            var ours: [Int: Double] = [:]
            for count in [few, large] {
                let (store, pool) = try await notes(count)
                let expected = Array(
                    (0..<count).map(StoreNote.make).filter { !$0.isDone }.sorted { $0.created > $1.created }.prefix(50))
                try BenchmarkCheck.same(try await store.fetch(screen), expected, "store.query")
                try BenchmarkCheck.same(
                    try await pool.read(HandWrittenRows.screen), expected, "store.query", baseline: "rows by hand")
                try BenchmarkCheck.same(
                    try await pool.read { try codableScreen.fetchAll($0) }, expected.map(PlainNote.init), "store.query",
                    baseline: "Codable records")
                let times = try await harness.interleavedMedians([
                    { for _ in 0..<20 { blackHole(try await store.fetch(screen)) } },
                    { for _ in 0..<20 { blackHole(try await pool.read(HandWrittenRows.screen)) } },
                    { for _ in 0..<20 { blackHole(try await pool.read { try codableScreen.fetchAll($0) }) } },
                ])
                ours[count] = times[0]
                if count == large {
                    results += rows("store.query", times, target: 1.3, details: [("models", large), ("queries", 20)])
                }
            }
            results.append(
                BenchmarkResult(
                    name: "store.query.scale", ours: ours[large] ?? 0, baseline: "ours on \(few) models",
                    baselineSeconds: ours[few] ?? 0, target: 1.5, details: [("models", large)]))
        }

        if wanted("store.count") {
            let (store, pool) = try await notes(large)
            let open = ModelQuery(StoreNote.self).filter(.equals(.isDone, false))
            let codableCount = {
                try await pool.read { try PlainNote.filter(Column("isDone") == false).fetchCount($0) }
            }
            let expected = (0..<large).count { !StoreNote.make($0).isDone }
            try BenchmarkCheck.same(try await store.count(open), expected, "store.count")
            try BenchmarkCheck.same(
                try await pool.read(HandWrittenRows.openCount), expected, "store.count", baseline: "rows by hand")
            try BenchmarkCheck.same(try await codableCount(), expected, "store.count", baseline: "Codable records")
            let times = try await harness.interleavedMedians([
                { for _ in 0..<20 { blackHole(try await store.count(open)) } },
                { for _ in 0..<20 { blackHole(try await pool.read(HandWrittenRows.openCount)) } },
                { for _ in 0..<20 { blackHole(try await codableCount()) } },
            ])
            results += rows("store.count", times, target: 1.2, details: [("models", large), ("counts", 20)])
        }

        if wanted("store.observe") {
            let (store, pool) = try await notes(small)
            let times = try await observe(store: store, pool: pool, screen: screen, from: small)
            results.append(
                BenchmarkResult(
                    name: "store.observe", ours: times[0], baseline: "ValueObservation, rows by hand",
                    baselineSeconds: times[1], target: 1.5, details: [("models", small), ("saves observed", 200)]))
        }

        if wanted("store.save-observed") {
            let (store, _) = try await notes(small)
            results += try await savesObserved(store: store, screen: screen, from: small + 1_000_000)
        }

        if wanted("store.read-during-sync") {
            results.append(try await readDuringSync(screen: screen, path: newPath))
        }

        if wanted("store.fetch-one") {
            let (store, pool) = try await notes(small)
            let ids = (0..<1_000).map { "note-\(($0 * 7_919) % small)" }
            let expected = ids.compactMap { id in Int(id.dropFirst(5)).map(StoreNote.make) }
            var found: [StoreNote] = []
            for id in ids { if let note = try await store.fetch(StoreNote.self, id: id) { found.append(note) } }
            try BenchmarkCheck.same(found, expected, "store.fetch-one")
            found = []
            for id in ids {
                if let note = try await pool.read({ try HandWrittenRows.note(id: id, $0) }) { found.append(note) }
            }
            try BenchmarkCheck.same(found, expected, "store.fetch-one", baseline: "rows by hand")
            let times = try await harness.interleavedMedians([
                { for id in ids { blackHole(try await store.fetch(StoreNote.self, id: id)) } },
                { for id in ids { blackHole(try await pool.read { try HandWrittenRows.note(id: id, $0) }) } },
                { for id in ids { blackHole(try await pool.read { try PlainNote.fetchOne($0, key: id) }) } },
            ])
            results += rows("store.fetch-one", times, target: 1.2, details: [("models", small), ("reads", ids.count)])
        }
        return results
    }

    /// The p99 latency of a screen's query (the 50 newest open notes, on their declared index) while an initial sync
    /// writes 20,000 notes into the store, against the p99 of the same query on the synced store, idle: what a list
    /// feels like while a first sync runs (sqlite-data's users report frames lost to the engine's writes).
    private func readDuringSync(screen: ModelQuery<StoreNote>, path: () -> String) async throws -> BenchmarkResult {
        let count = min(20_000, sizes.syncRecords)
        let zone = SyncStore.defaultZoneID
        let server = InMemoryCloudDatabase()
        _ = try await server.modifyRecordZones(saving: [zone], deleting: [])
        let encoder = CKRecordEncoder()
        try await server.saveRecords(
            try (0..<count).map { index in
                let encoded = try encoder.encodeRecords(StoreNote.make(index))[0]
                return CloudRecord(
                    recordType: encoded.recordType, id: CloudRecord.ID(recordName: encoded.id.recordName, zoneID: zone),
                    fields: encoded.fields)
            })
        let store = try SyncStore(path: path())
        try await store.declareIndexes(for: [StoreNote.self])
        func timed() async throws -> Double {
            let start = ContinuousClock.now
            blackHole(try await store.fetch(screen))
            let elapsed = start.duration(to: .now)
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
        func p99(_ times: [Double]) -> Double {
            let sorted = times.sorted()
            return sorted.isEmpty ? 0 : sorted[Int(Double(sorted.count - 1) * 0.99)]
        }
        let finished = Locked(false)
        let engine = SyncEngine(store: store, database: server)
        let sync = Task {
            defer { finished.withLock { $0 = true } }
            _ = try await engine.sync()
        }
        var during: [Double] = []
        while !finished.withLock({ $0 }) { during.append(try await timed()) }
        try await sync.value
        let expected = Array(
            (0..<count).map(StoreNote.make).filter { !$0.isDone }.sorted { $0.created > $1.created }.prefix(50))
        try BenchmarkCheck.same(try await store.fetch(screen), expected, "store.read-during-sync")
        var idle: [Double] = []
        for _ in 0..<max(500, during.count) { idle.append(try await timed()) }
        try await store.close()
        return BenchmarkResult(
            name: "store.read-during-sync", ours: p99(during), baseline: "the same query on the store idle, p99",
            baselineSeconds: p99(idle), target: 3,
            details: [("records synced", count), ("queries during", during.count)])
    }

    /// The latency of an observation: from each save's commit (the instant the writer's transaction observers learn
    /// of it) to the observer holding the result that has it; ours and the baseline's in turns, so that a slow spell
    /// of the machine falls on both. Timing from the save's return instead would hide the part of the read that ran
    /// while the saving task waited to resume: more of a fast read than of a slower one.
    private func observe(
        store: SyncStore, pool: DatabasePool, screen: ModelQuery<StoreNote>, from start: Int
    ) async throws -> [Double] {
        let ourCommits = CommitInstants()
        let plainCommits = CommitInstants()
        store.databaseWriter.add(transactionObserver: ourCommits, extent: .databaseLifetime)
        pool.add(transactionObserver: plainCommits, extent: .databaseLifetime)
        // Each delivery takes tens of microseconds: enough of them that the median isn't noise.
        let rounds = 200
        var next = start
        var ourResults = store.observe(screen).makeAsyncIterator()
        _ = try await ourResults.next()
        var plainResults = ValueObservation.tracking(HandWrittenRows.screen).removeDuplicates()
            .values(in: pool).makeAsyncIterator()
        _ = try await plainResults.next()
        var plainNext = start
        return try await harness.interleavedSelfTimedMedians([
            {
                var waited = Duration.zero
                for _ in 0..<rounds {
                    next += 1
                    try await store.save(Self.openNote(next))
                    let committed = try ourCommits.latest()
                    let result = try await ourResults.next()
                    waited += ContinuousClock.now - committed
                    try BenchmarkCheck.same(result?.first, Self.openNote(next), "store.observe")
                }
                return waited.seconds
            },
            {
                var waited = Duration.zero
                for _ in 0..<rounds {
                    plainNext += 1
                    let note = Self.openNote(plainNext)
                    try await pool.write { try HandWrittenRows.insert(note, in: $0) }
                    let committed = try plainCommits.latest()
                    let result = try await plainResults.next()
                    waited += ContinuousClock.now - committed
                    try BenchmarkCheck.same(result?.first, note, "store.observe", baseline: "rows by hand")
                }
                return waited.seconds
            },
        ])
    }

    /// What live observers cost a save: the time of a save with 200 observations of another type, and with 200 of
    /// the screen's query of notes (each delivery read in its observer's task, after the commit), against the same
    /// saves with none, in turns. Each save is timed from its call to its return: what the saving code waits for.
    private func savesObserved(
        store: SyncStore, screen: ModelQuery<StoreNote>, from start: Int
    ) async throws -> [BenchmarkResult] {
        let observers = 200
        let saves = 50
        var next = start
        // The observers' tasks for one turn: each takes its first result before the saves, then every later one.
        func observing<Model: QueryableModel & Equatable>(_ query: ModelQuery<Model>) async throws -> [Task<
            Int, any Error
        >] {
            var tasks: [Task<Int, any Error>] = []
            for _ in 0..<observers {
                let ready = AsyncStream.makeStream(of: Void.self)
                tasks.append(
                    Task {
                        var delivered = 0
                        for try await _ in store.observe(query) {
                            delivered += 1
                            if delivered == 1 { ready.continuation.yield(()) }
                        }
                        return delivered
                    })
                for await _ in ready.stream { break }
            }
            return tasks
        }
        func timedSaves() async throws -> Double {
            var seconds = 0.0
            for _ in 0..<saves {
                next += 1
                let began = ContinuousClock.now
                try await store.save(Self.openNote(next))
                seconds += (ContinuousClock.now - began).seconds
            }
            return seconds
        }
        func withObservers<Model: QueryableModel & Equatable>(_ query: ModelQuery<Model>, expectingDeliveries: Bool)
            async throws -> Double
        {
            let tasks = try await observing(query)
            let seconds = try await timedSaves()
            for task in tasks { task.cancel() }
            var delivered = 0
            for task in tasks { delivered += try await task.value - 1 }
            if !expectingDeliveries && delivered != 0 {
                throw BenchmarkFailure("store.save-observed: observers of tags were woken \(delivered) times by notes")
            }
            if expectingDeliveries && delivered == 0 {
                throw BenchmarkFailure("store.save-observed: the observers of notes saw none of the saves")
            }
            return seconds
        }
        let times = try await harness.interleavedSelfTimedMedians([
            { try await withObservers(ModelQuery(StoreTag.self), expectingDeliveries: false) },
            { try await withObservers(screen, expectingDeliveries: true) },
            { try await timedSaves() },
        ])
        let details = [("observers", observers), ("saves", saves)]
        return [
            BenchmarkResult(
                name: "store.save-observed.other-type", ours: times[0], baseline: "the same saves, no observer",
                baselineSeconds: times[2], target: 1.2, details: details),
            BenchmarkResult(
                name: "store.save-observed.same-type", ours: times[1], baseline: "the same saves, no observer",
                baselineSeconds: times[2], target: 1.5, details: details),
        ]
    }

    /// A note that enters the screen's query (open, created after every other): each save changes the result.
    private static func openNote(_ index: Int) -> StoreNote {
        var note = StoreNote.make(index)
        note.isDone = false
        return note
    }

    /// A store holding `count` notes, saved a few thousand per transaction, with the notes' index declared.
    private static func store(notes count: Int, path: String) async throws -> SyncStore {
        let store = try SyncStore(path: path)
        try await store.declareIndexes(for: [StoreNote.self])
        let encoder = CKRecordEncoder(zoneID: store.zoneID)
        for start in stride(from: 0, to: count, by: 5_000) {
            try await store.save(
                try (start..<min(count, start + 5_000)).flatMap { try encoder.encodeRecords(StoreNote.make($0)) })
        }
        return store
    }

    /// The same notes as `Codable` records (table `note`, dates as GRDB stores them, text) and as rows written by
    /// hand (table `hand_note`, dates as numbers), with the same index.
    private static func plain(notes count: Int, path: String) async throws -> DatabasePool {
        let pool = try DatabasePool(path: path)
        try await pool.write { db in
            try PlainNote.createTable(in: db)
            try HandWrittenRows.createNotes(in: db)
            for index in 0..<count {
                let note = StoreNote.make(index)
                try PlainNote(note).insert(db)
                try HandWrittenRows.insert(note, in: db)
            }
        }
        return pool
    }

    /// The folders with their files, in a store and in plain tables (`Codable` records and rows by hand).
    private static func graph(parents: Int, paths storePath: String, _ plainPath: String) async throws -> (
        SyncStore, DatabasePool
    ) {
        let store = try SyncStore(path: storePath)
        for start in stride(from: 0, to: parents, by: 500) {
            var records: [CloudRecord] = []
            for index in start..<min(parents, start + 500) {
                records += try CKRecordEncoder(zoneID: store.zoneID).encodeRecords(StoreFolder.make(index))
            }
            try await store.save(records)
        }
        let pool = try DatabasePool(path: plainPath)
        try await pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE folder (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
                    CREATE TABLE file (id TEXT PRIMARY KEY NOT NULL, folderID TEXT NOT NULL REFERENCES folder(id),
                        position INTEGER NOT NULL, name TEXT NOT NULL, size INTEGER NOT NULL);
                    CREATE INDEX file_by_folder ON file (folderID);
                    """)
            try HandWrittenRows.createGraph(in: db)
            for index in 0..<parents {
                let folder = StoreFolder.make(index)
                try PlainFolder(id: folder.id, name: folder.name).insert(db)
                for (position, file) in folder.files.enumerated() {
                    try PlainFile(
                        id: file.id, folderID: folder.id, position: position, name: file.name, size: file.size
                    )
                    .insert(db)
                }
                try HandWrittenRows.insert(folder, in: db)
            }
        }
        return (store, pool)
    }
}
