import Foundation
import GRDB
import NestedCloudKitCodable

/// Reads models from the rows of their record types' tables (``RecordTypeTable``), column by column, without their
/// records; a model a row can't give (``RowDecodingFallback``) is read from its record, as before the tables.
///
/// A `Codable` model decodes through ``TableRowDecoder``; a model `@CloudRecord` maps through its generated
/// ``CloudRecordRowDecodable/init(row:)``, the same reads as its ``CloudRecordDecodable/init(fields:)``. Either reads
/// what columns hold exactly (strings, numbers, Booleans, dates, bytes) and the models its references point to, a
/// level of the graph at a time from their own rows (``TableGraphRows``). A model with anything else (a nested
/// value, a list of values, a file, a location, a mapping written by hand) reads from its records: the first read
/// that meets one marks the model type, and its later reads go to the records directly. A single row that can't
/// give its model (marked `_inexact`, or missing a value) is read from its record, and the others from their rows.
enum TableRowReading {
    private struct ModelKey: Hashable {
        let model: ObjectIdentifier
        let recordType: String
    }

    /// The model types, by record type, that read from records (a row was found not to give them).
    private static let readFromRecords = Locked<Set<ModelKey>>([])
    /// The model types, by record type, that reference other models: their reads fetch their rows' graph.
    private static let readAsGraphs = Locked<Set<ModelKey>>([])

    /// Whether models of a type may be read from the rows of a record type's table.
    static func mayRead<Model>(_ type: Model.Type, recordType: String) -> Bool {
        if Model.self is any CloudRecordDecodable.Type, !(Model.self is any CloudRecordRowDecodable.Type) {
            return false
        }
        let key = ModelKey(model: ObjectIdentifier(Model.self), recordType: recordType)
        return !readFromRecords.withLock { $0.contains(key) }
    }

    /// The models of the rows a statement selects from a table (every column, `SELECT *`), in order; `nil` if
    /// the read must take the records instead.
    ///
    /// A row that can't give its model is read from its record (`fromRecord`, given its row in `ncs_record`).
    static func models<Model: Decodable>(
        _ type: Model.Type, table: RecordTypeTable, statement: Statement, arguments: StatementArguments,
        in db: Database, fromRecord: (_ row: Int64) throws -> Model?
    ) throws -> [Model]? {
        guard let columns = TableRowColumns(statementColumns: statement.columnNames, table: table) else { return nil }
        let key = ModelKey(model: ObjectIdentifier(Model.self), recordType: table.recordType)
        let decode = decoder(for: Model.self)
        do {
            if !readAsGraphs.withLock({ $0.contains(key) }) {
                do {
                    return try streamedModels(
                        columns: columns, statement: statement, arguments: arguments, decode: decode,
                        fromRecord: fromRecord)
                } catch RowDecodingFallback.needsReferencedRows {
                    _ = readAsGraphs.withLock { $0.insert(key) }
                }
            }
            return try graphModels(
                columns: columns, statement: statement, arguments: arguments, in: db, decode: decode,
                fromRecord: fromRecord)
        } catch RowDecodingFallback.modelNeedsRecords {
            _ = readFromRecords.withLock { $0.insert(key) }
            return nil
        }
    }

    /// The models of rows read one at a time from a cursor, for a model type that references no other model.
    private static func streamedModels<Model: Decodable>(
        columns: TableRowColumns, statement: Statement, arguments: StatementArguments,
        decode: (TableRowFields) throws -> Model, fromRecord: (_ row: Int64) throws -> Model?
    ) throws -> [Model]? {
        // The statement stepped by a cursor of its first column, which builds no row: each row is the statement's
        // current one, its values read from the statement (a cursor of rows would build a row, and a map of its
        // column names, for every read, a sixth of a read by ID).
        let cursor = try Int64?.fetchCursor(statement, arguments: arguments)
        columns.statement = statement.sqliteStatement
        defer { columns.statement = nil }
        let unused = Row()
        var models: [Model] = []
        while try cursor.next() != nil {
            guard
                let model = try model(
                    row: unused, columns: columns, graph: nil, decode: decode, fromRecord: fromRecord)
            else { return nil }
            models.append(model)
        }
        return models
    }

    /// The models of rows read together with the rows of their graph, a level at a time: each level's models
    /// are decoded, those that ask for a record not fetched yet are decoded again once the next level is fetched.
    private static func graphModels<Model: Decodable>(
        columns: TableRowColumns, statement: Statement, arguments: StatementArguments, in db: Database,
        decode: (TableRowFields) throws -> Model, fromRecord: (_ row: Int64) throws -> Model?
    ) throws -> [Model]? {
        // References may name records of any type, or records not there yet: an observation of a graph is woken
        // by a change to any.
        ReadRecorder.current?.readEveryType()
        let rows = try Row.fetchAll(statement, arguments: arguments)
        let graph = TableGraphRows(in: db)
        var models = [Model?](repeating: nil, count: rows.count)
        var pending = Array(rows.indices)
        for _ in 0..<TableGraphRows.maximumDepth where !pending.isEmpty {
            var again: [Int] = []
            for index in pending {
                do {
                    guard
                        let model = try model(
                            row: rows[index], columns: columns, graph: graph, decode: decode, fromRecord: fromRecord)
                    else { return nil }
                    models[index] = model
                } catch RowDecodingFallback.needsReferencedRows {
                    again.append(index)
                }
            }
            // Nothing more to read, or nothing read decoded: what is left waits on itself (a cycle).
            guard !again.isEmpty, graph.hasWork, try graph.fetchWanted() else {
                pending = again
                break
            }
            pending = again
        }
        // Deeper than a read follows, or a cycle: from their records.
        for index in pending {
            guard let recordRow = try? columns.integer(in: rows[index], at: columns.recordRowColumn),
                let model = try fromRecord(recordRow)
            else { return nil }
            models[index] = model
        }
        return models.compactMap { $0 }
    }

    /// The model of one row, or of its record when the row can't give it; `nil` if the record is gone.
    private static func model<Model: Decodable>(
        row: Row, columns: TableRowColumns, graph: TableGraphRows?, decode: (TableRowFields) throws -> Model,
        fromRecord: (_ row: Int64) throws -> Model?
    ) throws -> Model? {
        // A value SQLite can't give as the type asked (a file changed by something else than the store) is read
        // from the record too: `decode(atIndex:)` throws where a subscript would stop the program.
        guard let inexact = try? columns.integer(in: row, at: columns.inexactColumn),
            let recordRow = try? columns.integer(in: row, at: columns.recordRowColumn)
        else { return nil }
        if inexact != 0 { return try fromRecord(recordRow) }
        do {
            return try columns.decodeRow(row, graph: graph, decode)
        } catch RowDecodingFallback.rowNeedsRecord {
            return try fromRecord(recordRow)
        } catch let fallback as RowDecodingFallback {
            throw fallback
        } catch {
            // The model's own initializer refusing a value: the record's decoder reads it, or throws the error that
            // says what is wrong, with its coding path and field.
            return try fromRecord(recordRow)
        }
    }

    /// How models of a type decode from rows (looked up once per read of many).
    static func decoder<Model: Decodable>(for type: Model.Type) -> (TableRowFields) throws -> Model {
        if let mapped = Model.self as? any CloudRecordRowDecodable.Type { return decoder(mapped, as: Model.self) }
        // A mapping written by hand reads records through its own code.
        if Model.self is any CloudRecordDecodable.Type { return { throw $0.columns.raise(.modelNeedsRecords) } }
        return { try Model(from: TableRowDecoder(fields: $0)) }
    }

    /// The decoder of a mapped model, `Mapped` being `Model` opened.
    private static func decoder<Mapped: CloudRecordRowDecodable, Model>(_ mapped: Mapped.Type, as model: Model.Type)
        -> (TableRowFields) throws -> Model
    {
        guard Mapped.self == Model.self else { return { throw $0.columns.raise(.modelNeedsRecords) } }
        return { fields in
            let value = try Mapped(row: CloudRecordRow(fields.columns))
            // The same type: read in place, as the encoder reads a mapped value, without a cast.
            return withUnsafePointer(to: value) { UnsafeRawPointer($0).assumingMemoryBound(to: Model.self).pointee }
        }
    }
}
