import Foundation
import GRDB
import NestedCloudKitCodable

extension SyncStore {
    // MARK: Queries

    /// The models a query matches, decoded with everything they reference, read in one transaction.
    ///
    /// The filter, order, limit and offset run in SQLite, on an index when one was declared for the fields
    /// (``declareIndexes(for:)``); the references of the models found are read a level of the graph at a time.
    /// - Throws: ``SyncError/invalidQuery(_:)`` for a field name the model doesn't decode or a value a field
    ///   can't be compared with; `CKCodableError` if a record can't be decoded as the model.
    public func fetch<Model: QueryableModel>(_ query: ModelQuery<Model>) async throws -> [Model] {
        let zone = zoneID
        return try await read { db in Transfer(value: try Self.fetch(query, storeZone: zone, in: db)) }.value
    }

    /// The first model a query matches, or `nil`.
    public func fetchOne<Model: QueryableModel>(_ query: ModelQuery<Model>) async throws -> Model? {
        try await fetch(query.limit(1, offset: query.offset)).first
    }

    /// The records a query matches, as the store holds them (with the system fields of their last server copy).
    public func records<Model: QueryableModel>(matching query: ModelQuery<Model>) async throws -> [CloudRecord] {
        let zone = zoneID
        return try await read { db in try Self.records(matching: query, storeZone: zone, in: db) }
    }

    /// How many models a query matches (its limit and offset apply).
    public func count<Model: QueryableModel>(_ query: ModelQuery<Model>) async throws -> Int {
        let zone = zoneID
        return try await read { db in try Self.count(query, storeZone: zone, in: db) }
    }

    static func count<Model: QueryableModel>(
        _ query: ModelQuery<Model>, storeZone: CloudRecord.ZoneID, in db: Database
    ) throws -> Int {
        // COUNT(*) ignores the limit and offset; they cut the count here.
        let statement = try StoreSQL.statement(for: query, selecting: .count, storeZone: storeZone)
        let all = try Int.fetchOne(db, sql: statement.sql, arguments: statement.arguments) ?? 0
        let afterOffset = max(0, all - query.offset)
        return query.limit.map { min($0, afterOffset) } ?? afterOffset
    }

    /// Whether a query matches any model.
    public func exists<Model: QueryableModel>(_ query: ModelQuery<Model>) async throws -> Bool {
        let zone = zoneID
        return try await read { db in
            let statement = try StoreSQL.statement(for: query, selecting: .exists, storeZone: zone)
            return try Bool.fetchOne(db, sql: statement.sql, arguments: statement.arguments) ?? false
        }
    }

    /// What SQLite does to run a query (`EXPLAIN QUERY PLAN`): each step's detail, such as
    /// `SEARCH ncs_record USING INDEX ...` or `SCAN ncs_record`. For checking that a query uses an index.
    public func queryPlan<Model: QueryableModel>(_ query: ModelQuery<Model>) async throws -> [String] {
        let zone = zoneID
        return try await read { db in
            let statement = try StoreSQL.statement(for: query, selecting: .records, storeZone: zone)
            // A plan is made from the schema the connection has loaded, and an EXPLAIN never checks it against the
            // file's: a reader that last read before `declareIndexes` would show a plan without the new index.
            // Reading the schema table checks the schema's version (and loads the new one), as the next fetch will.
            try db.execute(sql: "SELECT 1 FROM sqlite_master LIMIT 1")
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                .map { $0["detail"] }
        }
    }

    // MARK: Indexes

    /// Makes the store's indexes those the model types declare (``QueryableModel/storeIndexes``): creates the ones
    /// it doesn't have and drops the ones no type declares any more. Call it once when the app starts, with
    /// every type the app queries.
    ///
    /// - Throws: ``SyncError/invalidIndex(_:)`` for a declaration that can't be an index (nothing is changed).
    public func declareIndexes(for types: [any QueryableModel.Type]) async throws {
        try await declareIndexes(types.flatMap { $0.storeIndexes })
    }

    /// Makes the store's indexes exactly these: creates the missing ones and drops the others it made before.
    ///
    /// - Throws: ``SyncError/invalidIndex(_:)`` for a declaration that can't be an index, such as a field named by
    ///   a string that its model doesn't decode (nothing is changed).
    public func declareIndexes(_ indexes: [StoreIndex]) async throws {
        for index in indexes { try index.validate() }
        try await write { db in
            let wanted = Dictionary(indexes.map { ($0.sqliteName, $0) }, uniquingKeysWith: { first, _ in first })
            let existing = try String.fetchSet(db, sql: "SELECT name FROM ncs_index")
            for name in existing where wanted[name] == nil {
                try db.execute(sql: "DROP INDEX IF EXISTS \(name)")
                try db.execute(sql: "DELETE FROM ncs_index WHERE name = ?", arguments: [name])
            }
            for (name, index) in wanted.sorted(by: { $0.key < $1.key }) where !existing.contains(name) {
                // The record's name last, ascending as queries break ties by it, so the index gives their whole
                // order.
                let columns =
                    ["zone_key"]
                    + index.columns.map { StoreSQL.expression($0.key) + ($0.descending ? " DESC" : "") }
                    + ["record_name"]
                try db.execute(
                    sql: """
                        CREATE INDEX IF NOT EXISTS \(name) ON ncs_record (\(columns.joined(separator: ", ")))
                        WHERE record_type = \(StoreSQL.literal(index.recordType))
                        """)
                try db.execute(
                    sql: "INSERT INTO ncs_index (name, record_type, definition) VALUES (?, ?, ?)",
                    arguments: [name, index.recordType, index.definition])
            }
        }
    }

    /// The indexes the store keeps, by what they cover: `Note(json_extract(fields, '$."isDone"'), created_at DESC)`.
    public func declaredIndexes() async throws -> [String] {
        try await read { db in try String.fetchAll(db, sql: "SELECT definition FROM ncs_index ORDER BY definition") }
    }

    // MARK: Reading inside a transaction

    static func records<Model: QueryableModel>(
        matching query: ModelQuery<Model>, storeZone: CloudRecord.ZoneID, in db: Database
    ) throws -> [CloudRecord] {
        let statement = try StoreSQL.statement(for: query, selecting: .records, storeZone: storeZone)
        let cursor = try Row.fetchCursor(db, sql: statement.sql, arguments: statement.arguments)
        var records: [CloudRecord] = []
        let shared = RecordCoding.SharedStrings()
        while let row = try cursor.next() { records.append(try RecordCoding.decode(row, column: 0, sharing: shared)) }
        return records
    }

    static func fetch<Model: QueryableModel>(
        _ query: ModelQuery<Model>, storeZone: CloudRecord.ZoneID, in db: Database
    ) throws -> [Model] {
        let statement = try StoreSQL.statement(for: query, selecting: .records, storeZone: storeZone)
        return try decode(
            Model.self, rows: try Row.fetchCursor(db, sql: statement.sql, arguments: statement.arguments),
            atMost: query.limit, in: db)
    }

    /// Decodes the models of rows whose first column is a record and second its row, a thousand at a time: the
    /// records of a chunk are let go of once its models are made, so a large read holds its models and one chunk of
    /// records, not every record as well. `limit` is how many rows there can be, when the query says.
    static func decode<Model: CKDecodable>(_ type: Model.Type, rows: RowCursor, atMost limit: Int?, in db: Database)
        throws -> [Model]
    {
        var values: [Model] = []
        var chunk: [CloudRecord] = []
        var chunkRows: [Int64] = []
        // A screen's query asks for a few dozen: a chunk's full capacity would be a large allocation (of fresh pages
        // the system maps and unmaps) on every read, and an observation reads on every change.
        let capacity = min(decodingChunk, max(0, limit ?? decodingChunk))
        chunk.reserveCapacity(capacity)
        chunkRows.reserveCapacity(capacity)
        let shared = RecordCoding.SharedStrings()
        while let row = try rows.next() {
            chunk.append(try RecordCoding.decode(row, column: 0, sharing: shared))
            chunkRows.append(row[1])
            guard chunk.count == decodingChunk else { continue }
            values += try decode(type, from: chunk, rows: chunkRows, in: db)
            chunk.removeAll(keepingCapacity: true)
            chunkRows.removeAll(keepingCapacity: true)
        }
        if !chunk.isEmpty { values += try decode(type, from: chunk, rows: chunkRows, in: db) }
        return values
    }

    /// How many models ``decode(_:rows:atMost:in:)`` decodes together: enough that a level of their graphs is read in a
    /// few statements, few enough that the records stay in the processor's caches.
    private static let decodingChunk = 1_000

    /// Decodes models from their records and the records they reference, read from the store a level of the
    /// graph at a time (``StoreGraphReader``), through the references of the roots' rows when they are given.
    static func decode<Model: CKDecodable>(
        _ type: Model.Type, from roots: [CloudRecord], rows: [Int64] = [], in db: Database
    ) throws -> [Model] {
        let reader = StoreGraphReader(roots: rows, in: db)
        return try CKRecordDecoder().decodeAll(type, from: roots) { ids, receive in
            // References may name records of any type, or records not there yet: an observation of a graph is
            // woken by a change to any.
            ReadRecorder.current?.readEveryType()
            try reader.read(ids, receive: receive)
        }
    }
}
