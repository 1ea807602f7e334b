import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitSync

extension Workloads {
    // MARK: Store reads

    /// The store as an app reads it, against plain GRDB tables of the same rows in the same run: every model of
    /// a type, a graph, a screen's query on a declared index, a count, an observation and reads by ID.
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

        if wanted("store.fetch-all") {
            var ours: [Int: Double] = [:]
            var plain: [Int: Double] = [:]
            for count in [small, large] {
                let (store, pool) = try await notes(count)
                let harness = count == large ? slow : self.harness
                let times = try await harness.interleavedMedians([
                    { _ = try await store.fetchAll(StoreNote.self) },
                    { _ = try await pool.read { try PlainNote.fetchAll($0) } },
                ])
                (ours[count], plain[count]) = (times[0], times[1])
            }
            for count in [small, large] {
                results.append(
                    BenchmarkResult(
                        name: count == small ? "store.fetch-all" : "store.fetch-all.large", ours: ours[count] ?? 0,
                        baseline: "GRDB Codable fetchAll", baselineSeconds: plain[count] ?? 0, target: 2,
                        details: [("models", count)]))
            }
            if wanted("store.fetch-all.mapped") {
                let (store, pool) = try await notes(small)
                let times = try await harness.interleavedMedians([
                    { _ = try await store.fetchAll(MappedStoreNote.self, recordType: "StoreNote") },
                    { _ = try await pool.read { try PlainNote.fetchAll($0) } },
                ])
                let (mapped, plainTime) = (times[0], times[1])
                results.append(
                    BenchmarkResult(
                        name: "store.fetch-all.mapped", ours: mapped, baseline: "GRDB Codable fetchAll",
                        baselineSeconds: plainTime, target: 2, details: [("models", small)]))
                results.append(
                    BenchmarkResult(
                        name: "store.fetch-all.mapped", ours: mapped, baseline: "the Codable model",
                        baselineSeconds: ours[small] ?? 0, target: .infinity))
            }
            results.append(
                BenchmarkResult(
                    name: "store.fetch-all.linear", ours: ours[large] ?? 0, baseline: "ours reading \(small)",
                    baselineSeconds: ours[small] ?? 0, target: Double(large / small) * 1.2,
                    details: [("models", large)]))
        }

        if wanted("store.fetch-graph") {
            let parents = sizes.storeParents
            let store = try SyncStore(path: newPath())
            for start in stride(from: 0, to: parents, by: 500) {
                var records: [CloudRecord] = []
                for index in start..<min(parents, start + 500) {
                    records += try CKRecordEncoder(zoneID: store.zoneID).encodeRecords(StoreFolder.make(index))
                }
                try await store.save(records)
            }
            let pool = try await Self.plainGraph(parents: parents, path: newPath())
            let codable: () async throws -> Void = {
                let folders = try await store.fetchAll(StoreFolder.self)
                guard folders.count == parents, folders.first?.files.count == 10 else { throw WrongResult() }
            }
            let mapped: () async throws -> Void = {
                let folders = try await store.fetchAll(MappedStoreFolder.self, recordType: "StoreFolder")
                guard folders.count == parents, folders.first?.files.count == 10 else { throw WrongResult() }
            }
            let grdb: () async throws -> Void = {
                let folders = try await pool.read { db -> [StoreFolder] in
                    let folders = try PlainFolder.order(Column("id")).fetchAll(db)
                    let files = Dictionary(
                        grouping: try PlainFile.order(Column("position")).fetchAll(db), by: \.folderID)
                    return folders.map { folder in
                        StoreFolder(
                            id: folder.id, name: folder.name,
                            files: (files[folder.id] ?? []).map { StoreFile(id: $0.id, name: $0.name, size: $0.size) })
                    }
                }
                guard folders.count == parents, folders.first?.files.count == 10 else { throw WrongResult() }
            }
            let withMapped = wanted("store.fetch-graph.mapped")
            let times = try await harness.interleavedMedians(withMapped ? [codable, grdb, mapped] : [codable, grdb])
            let (ours, plain) = (times[0], times[1])
            results.append(
                BenchmarkResult(
                    name: "store.fetch-graph", ours: ours, baseline: "GRDB two queries + grouping",
                    baselineSeconds: plain, target: 3, details: [("parents", parents), ("children", parents * 10)]))
            if withMapped {
                let mapped = times[2]
                results.append(
                    BenchmarkResult(
                        name: "store.fetch-graph.mapped", ours: mapped, baseline: "GRDB two queries + grouping",
                        baselineSeconds: plain, target: 3, details: [("parents", parents), ("children", parents * 10)]))
                results.append(
                    BenchmarkResult(
                        name: "store.fetch-graph.mapped", ours: mapped, baseline: "the Codable model",
                        baselineSeconds: ours, target: .infinity))
            }
        }

        let screen = ModelQuery(StoreNote.self).filter(.equals(.isDone, false)).sorted(by: .descending(.created))
            .limit(50)
        let plainScreen = PlainNote.filter(Column("isDone") == false).order(Column("created").desc).limit(50)

        if wanted("store.query") {
            let few = max(1, small / 10)
            var ours: [Int: Double] = [:]
            var plain: [Int: Double] = [:]
            for count in [few, large] {
                let (store, pool) = try await notes(count)
                let times = try await harness.interleavedMedians([
                    { for _ in 0..<20 { _ = try await store.fetch(screen) } },
                    { for _ in 0..<20 { _ = try await pool.read { try plainScreen.fetchAll($0) } } },
                ])
                (ours[count], plain[count]) = (times[0], times[1])
            }
            results.append(
                BenchmarkResult(
                    name: "store.query", ours: ours[large] ?? 0, baseline: "GRDB, same query and index",
                    baselineSeconds: plain[large] ?? 0, target: 3, details: [("models", large), ("queries", 20)]))
            results.append(
                BenchmarkResult(
                    name: "store.query.scale", ours: ours[large] ?? 0, baseline: "ours on \(few) models",
                    baselineSeconds: ours[few] ?? 0, target: 1.5, details: [("models", large)]))
        }

        if wanted("store.count") {
            let (store, pool) = try await notes(large)
            let open = ModelQuery(StoreNote.self).filter(.equals(.isDone, false))
            let times = try await harness.interleavedMedians([
                { for _ in 0..<20 { _ = try await store.count(open) } },
                {
                    for _ in 0..<20 {
                        _ = try await pool.read { try PlainNote.filter(Column("isDone") == false).fetchCount($0) }
                    }
                },
            ])
            let (ours, plain) = (times[0], times[1])
            results.append(
                BenchmarkResult(
                    name: "store.count", ours: ours, baseline: "GRDB fetchCount, same index", baselineSeconds: plain,
                    target: 3, details: [("models", large), ("counts", 20)]))
        }

        if wanted("store.observe") {
            // Timed from each save's commit (the instant the writer's transaction observers learn of it) to the
            // observer holding the result that has it; ours and GRDB's in turns, so that a slow spell of the
            // machine falls on both. Timing from the save's return instead would hide the part of the read that
            // ran while the saving task waited to resume: more of a fast read than of a slower one.
            let (store, pool) = try await notes(small)
            let ourCommits = CommitInstants()
            let plainCommits = CommitInstants()
            store.databaseWriter.add(transactionObserver: ourCommits, extent: .databaseLifetime)
            pool.add(transactionObserver: plainCommits, extent: .databaseLifetime)
            // Each delivery takes tens of microseconds: enough of them that the median isn't noise.
            let rounds = 200
            var next = small
            var ourResults = store.observe(screen).makeAsyncIterator()
            _ = try await ourResults.next()
            var plainResults = ValueObservation.tracking { try plainScreen.fetchAll($0) }.removeDuplicates()
                .values(in: pool).makeAsyncIterator()
            _ = try await plainResults.next()
            var plainNext = small
            let times = try await harness.interleavedSelfTimedMedians([
                {
                    var waited = Duration.zero
                    for _ in 0..<rounds {
                        next += 1
                        try await store.save(Self.openNote(next))
                        let committed = try ourCommits.latest()
                        guard try await ourResults.next()?.first?.id == "note-\(next)" else { throw WrongResult() }
                        waited += ContinuousClock.now - committed
                    }
                    return waited.seconds
                },
                {
                    var waited = Duration.zero
                    for _ in 0..<rounds {
                        plainNext += 1
                        let note = PlainNote(Self.openNote(plainNext))
                        try await pool.write { try note.insert($0) }
                        let committed = try plainCommits.latest()
                        guard try await plainResults.next()?.first?.id == "note-\(plainNext)" else {
                            throw WrongResult()
                        }
                        waited += ContinuousClock.now - committed
                    }
                    return waited.seconds
                },
            ])
            let (ours, plain) = (times[0], times[1])
            results.append(
                BenchmarkResult(
                    name: "store.observe", ours: ours, baseline: "GRDB ValueObservation", baselineSeconds: plain,
                    target: 2, details: [("models", small), ("saves observed", rounds)]))
        }

        if wanted("store.fetch-one") {
            let (store, pool) = try await notes(small)
            let ids = (0..<1_000).map { "note-\(($0 * 7_919) % small)" }
            let times = try await harness.interleavedMedians([
                { for id in ids { _ = try await store.fetch(StoreNote.self, id: id) } },
                { for id in ids { _ = try await pool.read { try PlainNote.fetchOne($0, key: id) } } },
            ])
            let (ours, plain) = (times[0], times[1])
            results.append(
                BenchmarkResult(
                    name: "store.fetch-one", ours: ours, baseline: "GRDB fetchOne by key", baselineSeconds: plain,
                    target: 2, details: [("models", small), ("reads", ids.count)]))
        }
        return results
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

    private static func plain(notes count: Int, path: String) async throws -> DatabasePool {
        let pool = try DatabasePool(path: path)
        try await pool.write { db in
            try PlainNote.createTable(in: db)
            for index in 0..<count { try PlainNote(StoreNote.make(index)).insert(db) }
        }
        return pool
    }

    private static func plainGraph(parents: Int, path: String) async throws -> DatabasePool {
        let pool = try DatabasePool(path: path)
        try await pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE folder (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
                    CREATE TABLE file (id TEXT PRIMARY KEY NOT NULL, folderID TEXT NOT NULL REFERENCES folder(id),
                        position INTEGER NOT NULL, name TEXT NOT NULL, size INTEGER NOT NULL);
                    CREATE INDEX file_by_folder ON file (folderID);
                    """)
            for index in 0..<parents {
                let folder = StoreFolder.make(index)
                try PlainFolder(id: folder.id, name: folder.name).insert(db)
                for (position, file) in folder.files.enumerated() {
                    try PlainFile(
                        id: file.id, folderID: folder.id, position: position, name: file.name, size: file.size
                    )
                    .insert(db)
                }
            }
        }
        return pool
    }
}

/// A workload read something other than what it wrote: its time would mean nothing.
struct WrongResult: Error {}
