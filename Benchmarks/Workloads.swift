import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitSQLite
import NestedCloudKitServer

/// Sizes of the workloads: the full run checks the targets; the quick one only shows that everything runs.
struct Sizes {
    var flatValues = 100_000
    var students = 1_000
    var books = 5_000
    var chainDepth = 20
    var treeFanOuts = [20, 20, 24]
    var sqliteRecords = 10_000
    var latency = Duration.milliseconds(10)
    /// The zones in which one change is read (changes since a token).
    var smallZone = 1_000
    var largeZone = 100_000
    /// The records of the sync engine's initial sync and of its large store.
    var syncRecords = 100_000
    /// The initial syncs whose peak memory is compared: the memory must not grow with the records.
    var syncMemorySmall = 10_000
    var syncMemoryLarge = 300_000
    /// Requests of the emulator's load test (half saves, half lookups) and the clients sending them at once.
    var emulatorRequests = 6_000
    var emulatorClients = 8
    /// The store read workloads: a screen's store, and a large one.
    var storeSmall = 10_000
    var storeLarge = 100_000
    /// Parents of the graph read, each with ten children.
    var storeParents = 1_000

    static let full = Sizes()
    static let quick = Sizes(
        flatValues: 2_000, students: 100, books: 500, chainDepth: 5, treeFanOuts: [5, 5, 8], sqliteRecords: 1_000,
        smallZone: 200, largeZone: 2_000, syncRecords: 2_000, syncMemorySmall: 200, syncMemoryLarge: 2_000,
        emulatorRequests: 400, storeSmall: 200, storeLarge: 2_000, storeParents: 50)
}

struct Workloads {
    let sizes: Sizes
    let harness: Harness

    // MARK: Flat values

    func encodeFlat() throws -> [BenchmarkResult] {
        let values = (0..<sizes.flatValues).map(Flat.make)
        let encoder = CKRecordEncoder()
        let json = JSONEncoder()
        try BenchmarkCheck.same(
            try values.map { try encoder.encodeRecords($0) }, values.map { [$0.makeRecord()] }, "encode.flat",
            baseline: "hand-written records")
        try BenchmarkCheck.same(
            try values.map { try JSONDecoder().decode(Flat.self, from: try json.encode($0)) }, values, "encode.flat",
            baseline: "JSONEncoder")
        let times = try harness.interleavedMedians([
            { for value in values { blackHole(try encoder.encodeRecords(value)) } },
            { for value in values { blackHole(try json.encode(value)) } },
            { for value in values { blackHole([value.makeRecord()]) } },
        ])
        let (ours, jsonTime, hand) = (times[0], times[1], times[2])
        return [
            BenchmarkResult(
                name: "encode.flat", ours: ours, baseline: "JSONEncoder", baselineSeconds: jsonTime, target: 0.6),
            BenchmarkResult(
                name: "encode.flat", ours: ours, baseline: "hand-written records", baselineSeconds: hand, target: 1.5),
        ]
    }

    func decodeFlat() throws -> [BenchmarkResult] {
        let values = (0..<sizes.flatValues).map(Flat.make)
        let records = values.map { $0.makeRecord() }
        let data = try values.map { try JSONEncoder().encode($0) }
        let decoder = CKRecordDecoder()
        let json = JSONDecoder()
        try BenchmarkCheck.same(
            try records.map { try decoder.decode(Flat.self, from: $0, records: []) }, values, "decode.flat")
        try BenchmarkCheck.same(
            records.map { Flat(record: $0) }, values, "decode.flat", baseline: "hand-written values")
        try BenchmarkCheck.same(
            try data.map { try json.decode(Flat.self, from: $0) }, values, "decode.flat", baseline: "JSONDecoder")
        let times = try harness.interleavedMedians([
            { for record in records { blackHole(try decoder.decode(Flat.self, from: record, records: [])) } },
            { for item in data { blackHole(try json.decode(Flat.self, from: item)) } },
            { for record in records { blackHole(Flat(record: record)) } },
        ])
        let (ours, jsonTime, hand) = (times[0], times[1], times[2])
        return [
            BenchmarkResult(
                name: "decode.flat", ours: ours, baseline: "JSONDecoder", baselineSeconds: jsonTime, target: 0.6),
            BenchmarkResult(
                name: "decode.flat", ours: ours, baseline: "hand-written values", baselineSeconds: hand, target: 1.5),
        ]
    }

    // MARK: Flat values, mapped

    /// The flat workload through a record mapping (the code `@CloudRecord` generates) instead of Codable.
    func encodeFlatMapped() throws -> [BenchmarkResult] {
        let flats = (0..<sizes.flatValues).map(Flat.make)
        let values = flats.map(MappedFlat.init)
        let encoder = CKRecordEncoder()
        try BenchmarkCheck.same(
            try values.map { try encoder.encodeRecords($0) }, flats.map { [$0.makeRecord()] }, "encode.flat.mapped",
            baseline: "hand-written records")
        let times = try harness.interleavedMedians([
            { for value in values { blackHole(try encoder.encodeRecords(value)) } },
            { for value in flats { blackHole(try encoder.encodeRecords(value)) } },
            { for value in flats { blackHole([value.makeRecord()]) } },
        ])
        let (ours, codable, hand) = (times[0], times[1], times[2])
        return [
            BenchmarkResult(
                name: "encode.flat.mapped", ours: ours, baseline: "hand-written records", baselineSeconds: hand,
                target: 1.3),
            BenchmarkResult(
                name: "encode.flat.mapped", ours: ours, baseline: "the Codable model", baselineSeconds: codable,
                target: .infinity),
        ]
    }

    func decodeFlatMapped() throws -> [BenchmarkResult] {
        let flats = (0..<sizes.flatValues).map(Flat.make)
        let records = flats.map { $0.makeRecord() }
        let decoder = CKRecordDecoder()
        try BenchmarkCheck.same(
            try records.map { try decoder.decode(MappedFlat.self, from: $0, records: []) }, flats.map(MappedFlat.init),
            "decode.flat.mapped")
        let times = try harness.interleavedMedians([
            { for record in records { blackHole(try decoder.decode(MappedFlat.self, from: record, records: [])) } },
            { for record in records { blackHole(try decoder.decode(Flat.self, from: record, records: [])) } },
            { for record in records { blackHole(Flat(record: record)) } },
        ])
        let (ours, codable, hand) = (times[0], times[1], times[2])
        return [
            BenchmarkResult(
                name: "decode.flat.mapped", ours: ours, baseline: "hand-written values", baselineSeconds: hand,
                target: 1.3),
            BenchmarkResult(
                name: "decode.flat.mapped", ours: ours, baseline: "the Codable model", baselineSeconds: codable,
                target: .infinity),
        ]
    }

    // MARK: A graph

    func encodeGraph() throws -> [BenchmarkResult] {
        let campus = Campus.make(students: sizes.students, books: sizes.books)
        let encoder = CKRecordEncoder()
        let json = JSONEncoder()
        try BenchmarkCheck.same(
            try encoder.encodeRecords(campus), campus.makeRecords(), "encode.graph", baseline: "hand-written records")
        try BenchmarkCheck.same(
            try JSONDecoder().decode(Campus.self, from: try json.encode(campus)), campus, "encode.graph",
            baseline: "JSONEncoder")
        let times = try harness.interleavedMedians([
            { blackHole(try encoder.encodeRecords(campus)) },
            { blackHole(try json.encode(campus)) },
            { blackHole(campus.makeRecords()) },
        ])
        let (ours, jsonTime, hand) = (times[0], times[1], times[2])
        return [
            BenchmarkResult(
                name: "encode.graph", ours: ours, baseline: "JSONEncoder", baselineSeconds: jsonTime, target: 0.6,
                details: [("records", sizes.students + sizes.books + 2)]),
            BenchmarkResult(
                name: "encode.graph", ours: ours, baseline: "hand-written records", baselineSeconds: hand, target: 1.5),
        ]
    }

    func decodeGraph() throws -> [BenchmarkResult] {
        let campus = Campus.make(students: sizes.students, books: sizes.books)
        let graph = try CKRecordEncoder().encodeGraph(campus)
        let data = try JSONEncoder().encode(campus)
        let decoder = CKRecordDecoder()
        let json = JSONDecoder()
        let byID = Dictionary(uniqueKeysWithValues: graph.records.map { ($0.id, $0) })
        try BenchmarkCheck.same(try decoder.decode(Campus.self, from: graph), campus, "decode.graph")
        try BenchmarkCheck.same(
            Campus.read(from: byID, root: graph.root), campus, "decode.graph", baseline: "hand-written values")
        try BenchmarkCheck.same(
            try json.decode(Campus.self, from: data), campus, "decode.graph", baseline: "JSONDecoder")
        let times = try harness.interleavedMedians([
            { blackHole(try decoder.decode(Campus.self, from: graph)) },
            { blackHole(try json.decode(Campus.self, from: data)) },
            { blackHole(Campus.read(from: byID, root: graph.root)) },
        ])
        let (ours, jsonTime, hand) = (times[0], times[1], times[2])
        return [
            BenchmarkResult(
                name: "decode.graph", ours: ours, baseline: "JSONDecoder", baselineSeconds: jsonTime, target: 0.6),
            BenchmarkResult(
                name: "decode.graph", ours: ours, baseline: "hand-written values", baselineSeconds: hand, target: 1.5),
        ]
    }

    func encodeGraphMapped() throws -> [BenchmarkResult] {
        let campus = Campus.make(students: sizes.students, books: sizes.books)
        let mapped = MappedCampus(campus)
        let encoder = CKRecordEncoder()
        try BenchmarkCheck.same(
            try encoder.encodeRecords(mapped), campus.makeRecords(), "encode.graph.mapped",
            baseline: "hand-written records")
        let times = try harness.interleavedMedians([
            { blackHole(try encoder.encodeRecords(mapped)) },
            { blackHole(try encoder.encodeRecords(campus)) },
            { blackHole(campus.makeRecords()) },
        ])
        let (ours, codable, hand) = (times[0], times[1], times[2])
        return [
            BenchmarkResult(
                name: "encode.graph.mapped", ours: ours, baseline: "hand-written records", baselineSeconds: hand,
                target: 2),
            BenchmarkResult(
                name: "encode.graph.mapped", ours: ours, baseline: "the Codable model", baselineSeconds: codable,
                target: .infinity),
        ]
    }

    func decodeGraphMapped() throws -> [BenchmarkResult] {
        let campus = Campus.make(students: sizes.students, books: sizes.books)
        let graph = try CKRecordEncoder().encodeGraph(campus)
        let decoder = CKRecordDecoder()
        try BenchmarkCheck.same(
            try decoder.decode(MappedCampus.self, from: graph), MappedCampus(campus), "decode.graph.mapped")
        let byID = Dictionary(uniqueKeysWithValues: graph.records.map { ($0.id, $0) })
        let times = try harness.interleavedMedians([
            { blackHole(try decoder.decode(MappedCampus.self, from: graph)) },
            { blackHole(try decoder.decode(Campus.self, from: graph)) },
            { blackHole(Campus.read(from: byID, root: graph.root)) },
        ])
        let (ours, codable, hand) = (times[0], times[1], times[2])
        return [
            BenchmarkResult(
                name: "decode.graph.mapped", ours: ours, baseline: "hand-written values", baselineSeconds: hand,
                target: 2),
            BenchmarkResult(
                name: "decode.graph.mapped", ours: ours, baseline: "the Codable model", baselineSeconds: codable,
                target: .infinity),
        ]
    }

    /// Peak resident memory while encoding and decoding the graph, against the memory the records themselves
    /// take: what building the same records by hand grows by. (Their field data, as CloudKit counts it, is
    /// reported too: in memory a record takes several times its field data.)
    func graphMemory() throws -> [BenchmarkResult] {
        let campus = Campus.make(students: sizes.students, books: sizes.books)
        let fieldBytes = try CKRecordEncoder().encodeRecords(campus).reduce(0) { $0 + Self.size(of: $1) }
        func growth(_ body: () throws -> Void) rethrows -> Double {
            // Warm up once, so allocator caches and lazily loaded code don't count.
            try body()
            ResidentMemory.releaseFreedPages()
            let before = ResidentMemory.current() ?? 0
            ResidentMemory.resetPeak()
            try body()
            return Double(max(0, (ResidentMemory.peak() ?? 0) - before))
        }
        var kept: [CloudRecord] = []
        let recordsGrowth = growth { kept = campus.makeRecords() }
        let encodeGrowth = try growth { kept = try CKRecordEncoder().encodeRecords(campus) }
        let graph = try CKRecordEncoder().encodeGraph(campus)
        var decoded: Campus?
        let decodeGrowth = try growth { decoded = try CKRecordDecoder().decode(Campus.self, from: graph) }
        try BenchmarkCheck.same(kept, campus.makeRecords(), "memory.encode", baseline: "records produced")
        try BenchmarkCheck.same(decoded, campus, "memory.decode")
        return [
            BenchmarkResult(
                name: "memory.encode", ours: encodeGrowth, baseline: "records produced", baselineSeconds: recordsGrowth,
                target: 4, details: [("field_data_bytes", fieldBytes)]),
            BenchmarkResult(
                name: "memory.decode", ours: decodeGrowth, baseline: "records produced", baselineSeconds: recordsGrowth,
                target: .infinity),
        ]
    }

    /// The bytes a record's fields hold: names and values, as CloudKit counts them.
    static func size(of record: CloudRecord) -> Int {
        record.fields.reduce(record.id.recordName.utf8.count + record.recordType.utf8.count) { total, field in
            let value: Int =
                switch field.value {
                case .string(let string): string.utf8.count
                case .bytes(let data): data.count
                case .stringList(let list): list.reduce(0) { $0 + $1.utf8.count }
                case .referenceList(let list): list.reduce(0) { $0 + $1.recordID.recordName.utf8.count }
                case .reference(let reference): reference.recordID.recordName.utf8.count
                case .location: 64
                default: 8
                }
            return total + field.name.utf8.count + value
        }
    }

    // MARK: Resolution through a database with latency

    func resolve(name: String, root: TreeNode, depth: Int) async throws -> BenchmarkResult {
        let database = InMemoryCloudDatabase(maximumItemsPerRequest: 400)
        let saved = try await database.saveRecords(try CKRecordEncoder().encodeRecords(root))
        let rootRecord = saved[saved.count - 1]
        database.network.latency = sizes.latency
        var decoder = CKRecordDecoder()
        decoder.maximumDepth = max(decoder.maximumDepth, depth)
        var statistics = CloudRequestStatistics()
        try BenchmarkCheck.same(
            try await decoder.decode(TreeNode.self, from: rootRecord, referenceDatabase: database), root, name)
        let ours = try await harness.median {
            database.network.resetStatistics()
            blackHole(try await decoder.decode(TreeNode.self, from: rootRecord, referenceDatabase: database))
            statistics = database.network.statistics
        }
        // The floor: one round trip per level; each level split into requests of at most 400.
        var levels: [Int] = []
        var level = [root]
        while !level.isEmpty {
            level = level.flatMap(\.children)
            if !level.isEmpty { levels.append(level.count) }
        }
        let distinct = levels.reduce(0, +)
        let requests = levels.reduce(0) { $0 + ($1 + 399) / 400 }
        var failure: String?
        if statistics.fetchRequests != requests {
            failure = "\(statistics.fetchRequests) requests for a floor of \(requests)"
        }
        if statistics.recordsFetched != distinct {
            failure = "\(statistics.recordsFetched) records fetched for \(distinct) distinct"
        }
        return BenchmarkResult(
            name: name, ours: ours, baseline: "depth x latency", baselineSeconds: Double(depth) * sizes.latency.seconds,
            target: 1.2,
            details: [
                ("depth", depth), ("round_trips", statistics.fetchRequests), ("requests_floor", requests),
                ("records", distinct), ("records_fetched", statistics.recordsFetched),
            ],
            failure: failure
        )
    }

    func resolveChain() async throws -> BenchmarkResult {
        try await resolve(name: "resolve.chain", root: TreeNode.chain(depth: sizes.chainDepth), depth: sizes.chainDepth)
    }

    func resolveWide() async throws -> BenchmarkResult {
        try await resolve(
            name: "resolve.wide", root: TreeNode.tree(fanOuts: sizes.treeFanOuts), depth: sizes.treeFanOuts.count)
    }

    // MARK: SQLite against plain GRDB

    /// Saving and fetching records, against the same records as JSON rows of one plain GRDB table, written the way
    /// an expert writes them: one prepared statement, one coder, the same transactions, the same concurrency.
    func sqlite() async throws -> [BenchmarkResult] {
        let records = (0..<sizes.sqliteRecords).map { Flat.make($0).makeRecord() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nckc-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var counter = 0
        func path() -> String {
            counter += 1
            return directory.appendingPathComponent("\(counter).sqlite").path
        }
        // Ours saves in requests of 400, one transaction each, one request after another; the baseline the same.
        let chunks = stride(from: 0, to: records.count, by: 400).map {
            Array(records[$0..<min($0 + 400, records.count)])
        }

        var database: SQLiteCloudDatabase?
        var plain: DatabasePool?
        let saves = try await harness.interleavedMedians([
            {
                let fresh = try SQLiteCloudDatabase(path: path())
                blackHole(try await fresh.saveRecords(records))
                database = fresh
            },
            {
                let pool = try PlainGRDB.open(path())
                for chunk in chunks { try await PlainGRDB.insert(chunk, into: pool) }
                plain = pool
            },
        ])
        guard let database, let plain else { throw BenchmarkFailure("sqlite: nothing was saved") }
        let ids = records.map(\.id)
        // Ours fetches its requests of 400 in flight together (`fetchRecords`); so does the baseline.
        let expected = Dictionary(uniqueKeysWithValues: records.map { ($0.id, $0.fields) })
        try BenchmarkCheck.same(
            try await database.fetchRecords(ids).mapValues { try $0.get().fields }, expected, "sqlite.fetch")
        try BenchmarkCheck.same(
            Dictionary(uniqueKeysWithValues: try await PlainGRDB.fetch(ids, from: plain).map { ($0.id, $0.fields) }),
            expected, "sqlite.fetch", baseline: "plain GRDB")
        let fetches = try await harness.interleavedMedians([
            { blackHole(try await database.fetchRecords(ids)) },
            { blackHole(try await PlainGRDB.fetch(ids, from: plain)) },
        ])
        return [
            BenchmarkResult(
                name: "sqlite.save", ours: saves[0], baseline: "plain GRDB, prepared INSERT", baselineSeconds: saves[1],
                target: 1.5, details: [("records", records.count)]),
            BenchmarkResult(
                name: "sqlite.fetch", ours: fetches[0], baseline: "plain GRDB, same concurrency",
                baselineSeconds: fetches[1], target: 1.2, details: [("records", records.count)]),
        ]
    }
}

/// The baseline for the SQLite database: the same records as JSON rows of one table, written and read with plain
/// GRDB and none of CloudKit's rules, the way an expert would: a prepared statement reused for every row, one
/// coder per transaction, requests of 400 fetched in flight together.
enum PlainGRDB {
    static func open(_ path: String) throws -> DatabasePool {
        let pool = try DatabasePool(path: path)
        try pool.write { database in
            try database.execute(
                sql: """
                    CREATE TABLE record (id INTEGER PRIMARY KEY, zone_name TEXT, owner_name TEXT, record_name TEXT,
                        record_type TEXT, body BLOB, UNIQUE (zone_name, owner_name, record_name))
                    """)
        }
        return pool
    }

    static func insert(_ records: [CloudRecord], into pool: DatabasePool) async throws {
        try await pool.write { database in
            let encoder = JSONEncoder()
            let insert = try database.cachedStatement(
                sql: "INSERT INTO record (zone_name, owner_name, record_name, record_type, body) VALUES (?, ?, ?, ?, ?)"
            )
            for record in records {
                try insert.execute(arguments: [
                    record.id.zoneID.zoneName, record.id.zoneID.ownerName, record.id.recordName, record.recordType,
                    try encoder.encode(record),
                ])
            }
        }
    }

    static func fetch(_ ids: [CloudRecord.ID], from pool: DatabasePool) async throws -> [CloudRecord] {
        try await withThrowingTaskGroup(of: [CloudRecord].self) { group in
            for start in stride(from: 0, to: ids.count, by: 400) {
                let chunk = Array(ids[start..<min(start + 400, ids.count)])
                group.addTask { try await fetchChunk(chunk, from: pool) }
            }
            var records: [CloudRecord] = []
            for try await chunk in group { records += chunk }
            return records
        }
    }

    private static func fetchChunk(_ ids: [CloudRecord.ID], from pool: DatabasePool) async throws -> [CloudRecord] {
        try await pool.read { database in
            let decoder = JSONDecoder()
            let select = try database.cachedStatement(
                sql: "SELECT body FROM record WHERE zone_name = ? AND owner_name = ? AND record_name = ?")
            return try ids.compactMap { id in
                guard
                    let body = try Data.fetchOne(
                        select, arguments: [id.zoneID.zoneName, id.zoneID.ownerName, id.recordName])
                else { return nil }
                return try decoder.decode(CloudRecord.self, from: body)
            }
        }
    }
}
