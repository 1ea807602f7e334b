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
        let (table, exists) = try Self.table(of: query, in: db)
        let statement = try StoreSQL.statement(for: query, selecting: .count, storeZone: storeZone, table: table)
        guard exists else { return 0 }
        let all = try Int.fetchOne(db.cachedStatement(sql: statement.sql), arguments: statement.arguments) ?? 0
        let afterOffset = max(0, all - query.offset)
        return query.limit.map { min($0, afterOffset) } ?? afterOffset
    }

    /// Whether a query matches any model.
    public func exists<Model: QueryableModel>(_ query: ModelQuery<Model>) async throws -> Bool {
        let zone = zoneID
        return try await read { db in
            let (table, exists) = try Self.table(of: query, in: db)
            let statement = try StoreSQL.statement(for: query, selecting: .exists, storeZone: zone, table: table)
            guard exists else { return false }
            return try Bool.fetchOne(db.cachedStatement(sql: statement.sql), arguments: statement.arguments) ?? false
        }
    }

    /// What SQLite does to run a query (`EXPLAIN QUERY PLAN`): each step's detail, such as
    /// `SEARCH Note USING INDEX ...` or `SCAN Note`. For checking that a query uses an index. Empty for a record type
    /// the store has no table for yet (no record of it, no index declared on it).
    public func queryPlan<Model: QueryableModel>(_ query: ModelQuery<Model>) async throws -> [String] {
        let zone = zoneID
        return try await read { db in
            let (table, exists) = try Self.table(of: query, in: db)
            let statement = try StoreSQL.statement(for: query, selecting: .rows, storeZone: zone, table: table)
            guard exists else { return [] }
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
                // The table, and a column for each field, before any record has them: the index is there when
                // they come.
                let fields = index.columns.compactMap { column -> (field: String, kind: CloudValue.Kind?)? in
                    if case .field(let field) = column.key { (field, nil) } else { nil }
                }
                let table = try RecordTypeTable.table(for: index.recordType, in: db).adding(fields, in: db)
                // The record's name last, ascending as queries break ties by it, so the index gives their whole
                // order.
                let columns =
                    ["_zone_key"]
                    + index.columns.map { StoreSQL.column($0.key) + ($0.descending ? " DESC" : "") }
                    + ["_record_name"]
                try db.execute(
                    sql: """
                        CREATE INDEX IF NOT EXISTS \(name) ON \(StoreSQL.identifier(table.tableName)) \
                        (\(columns.joined(separator: ", ")))
                        """)
                try db.execute(
                    sql: "INSERT INTO ncs_index (name, record_type, definition) VALUES (?, ?, ?)",
                    arguments: [name, index.recordType, index.definition])
            }
        }
    }

    /// The indexes the store keeps, by what they cover: `Note("isDone", _created_at DESC)`.
    public func declaredIndexes() async throws -> [String] {
        try await read { db in try String.fetchAll(db, sql: "SELECT definition FROM ncs_index ORDER BY definition") }
    }

    // MARK: Reading inside a transaction

    /// The table a query reads, and whether the store has it: if not, a table without columns, which checks the
    /// query (the query finds nothing).
    static func table<Model: QueryableModel>(of query: ModelQuery<Model>, in db: Database) throws
        -> (table: RecordTypeTable, exists: Bool)
    {
        let recordType = StoreSQL.recordType(of: query)
        if let table = try RecordTypeTable.existing(for: recordType, in: db) { return (table, true) }
        return (RecordTypeTable(recordType: recordType, tableName: recordType, columns: []), false)
    }

    static func records<Model: QueryableModel>(
        matching query: ModelQuery<Model>, storeZone: CloudRecord.ZoneID, in db: Database
    ) throws -> [CloudRecord] {
        let (table, exists) = try Self.table(of: query, in: db)
        let statement = try StoreSQL.statement(for: query, selecting: .records, storeZone: storeZone, table: table)
        guard exists else { return [] }
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: statement.sql), arguments: statement.arguments)
        var records: [CloudRecord] = []
        let shared = RecordCoding.SharedStrings()
        while let row = try cursor.next() { records.append(try RecordCoding.decode(row, column: 0, sharing: shared)) }
        return records
    }

    static func fetch<Model: QueryableModel>(
        _ query: ModelQuery<Model>, storeZone: CloudRecord.ZoneID, in db: Database
    ) throws -> [Model] {
        let (table, exists) = try Self.table(of: query, in: db)
        if exists, TableRowReading.mayRead(Model.self, recordType: table.recordType) {
            let statement = try StoreSQL.statement(for: query, selecting: .rows, storeZone: storeZone, table: table)
            if let models = try rows(Model.self, of: table, sql: statement.sql, arguments: statement.arguments, in: db)
            {
                return models
            }
        }
        let statement = try StoreSQL.statement(for: query, selecting: .records, storeZone: storeZone, table: table)
        guard exists else { return [] }
        return try decode(
            Model.self,
            rows: try Row.fetchCursor(db.cachedStatement(sql: statement.sql), arguments: statement.arguments),
            atMost: query.limit, in: db)
    }

    /// The models of the rows a statement selects from a table (``TableRowReading``), or `nil` if the read takes
    /// the records.
    static func rows<Model: CKDecodable>(
        _ type: Model.Type, of table: RecordTypeTable, sql: String, arguments: StatementArguments, in db: Database
    ) throws -> [Model]? {
        try TableRowReading.models(
            Model.self, table: table, statement: try db.cachedStatement(sql: sql), arguments: arguments, in: db
        ) { row in
            let record = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT record, rowid FROM ncs_record WHERE rowid = ?"), arguments: [row]
            ).map { try RecordCoding.decode($0, column: 0) }
            guard let record else { return nil }
            return try decode(Model.self, from: [record], rows: [row], in: db).first
        }
    }

    /// Every model of a type in a zone, by record name, read from the rows of its table when they give it
    /// (``TableRowReading``), else from the records.
    static func fetchAll<Model: CKDecodable>(
        _ type: Model.Type, recordType: String, in zone: CloudRecord.ZoneID, in db: Database
    ) throws -> [Model] {
        if TableRowReading.mayRead(Model.self, recordType: recordType),
            let table = try RecordTypeTable.existing(for: recordType, in: db)
        {
            if let models = try rows(
                Model.self, of: table, sql: table.selectInZoneSQL, arguments: [zone.ownerName, zone.zoneName], in: db)
            {
                return models
            }
        }
        return try decode(
            Model.self, rows: try StoreTables.rows(ofType: recordType, in: zone, in: db), atMost: nil, in: db)
    }

    /// The model of the record with an ID, read from its row when the model's table has it and gives it, else
    /// from the record (of whatever type); `nil` if the store has no such record.
    static func fetch<Model: CKDecodable>(_ type: Model.Type, id: CloudRecord.ID, in db: Database) throws -> Model? {
        let recordType = StoreSQL.recordType(named: Model.self)
        if TableRowReading.mayRead(Model.self, recordType: recordType),
            let table = try RecordTypeTable.existing(for: recordType, in: db)
        {
            let arguments: StatementArguments = [id.zoneID.ownerName, id.zoneID.zoneName, id.recordName]
            if let models = try rows(Model.self, of: table, sql: table.selectByNameSQL, arguments: arguments, in: db),
                !models.isEmpty
            {
                return models[0]
            }
        }
        guard let record = try StoreTables.records([id], in: db).first else { return nil }
        return try decode(Model.self, from: [record], in: db).first
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
