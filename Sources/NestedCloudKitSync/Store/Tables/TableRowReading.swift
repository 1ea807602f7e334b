import Foundation
import GRDB
import NestedCloudKitCodable

/// Reads models from the rows of their record type's table (``RecordTypeTable``), column by column, without their
/// records; a model a row can't give (``RowDecodingFallback``) is read from its record, as before the tables.
///
/// The rows of a read give its models when the model's type reads only what columns hold exactly: a flat model of
/// strings, numbers, Booleans, dates and bytes. A mapped model (``CloudRecordMappable``), a model with references,
/// lists, nested values, files or locations reads from its records; the first read that meets one of those marks
/// the model type, and its later reads go to the records directly.
enum TableRowReading {
    private struct ModelKey: Hashable {
        let model: ObjectIdentifier
        let recordType: String
    }

    /// The model types, by record type, that read from records (a row was found not to give them).
    private static let readFromRecords = Locked<Set<ModelKey>>([])

    /// Whether models of a type may be read from the rows of a record type's table.
    static func mayRead<Model>(_ type: Model.Type, recordType: String) -> Bool {
        if Model.self is any CloudRecordMappable.Type { return false }
        let key = ModelKey(model: ObjectIdentifier(Model.self), recordType: recordType)
        return !readFromRecords.withLock { $0.contains(key) }
    }

    /// The models of the rows a statement selects from a table (every column, `SELECT *`), in order; `nil` if
    /// the read must take the records instead.
    ///
    /// A row marked `_inexact` is read from its record (`fromRecord`, given its row in `ncs_record`).
    static func models<Model: Decodable>(
        _ type: Model.Type, table: RecordTypeTable, statement: Statement, arguments: StatementArguments,
        fromRecord: (_ row: Int64) throws -> Model?
    ) throws -> [Model]? {
        let names = statement.columnNames
        guard let rowColumn = names.firstIndex(of: "_record_row"), let inexactColumn = names.firstIndex(of: "_inexact")
        else { return nil }
        let columns = TableRowColumns(statementColumns: names, table: table)
        let cursor = try Row.fetchCursor(statement, arguments: arguments)
        var models: [Model] = []
        while let row = try cursor.next() {
            // A value SQLite can't give as the type asked (a file changed by something else than the store) is
            // read from the record too: `decode(atIndex:)` throws where a subscript would stop the program.
            guard let inexact = try? row.decode(Int64.self, atIndex: inexactColumn),
                let recordRow = try? row.decode(Int64.self, atIndex: rowColumn)
            else { return nil }
            if inexact != 0 {
                guard let model = try fromRecord(recordRow) else { return nil }
                models.append(model)
                continue
            }
            columns.beginRow()
            do {
                models.append(try Model(from: TableRowDecoder(row: row, columns: columns)))
            } catch RowDecodingFallback.modelNeedsRecords {
                let key = ModelKey(model: ObjectIdentifier(Model.self), recordType: table.recordType)
                _ = readFromRecords.withLock { $0.insert(key) }
                return nil
            } catch {
                // A row without a value the model needs, or the model's own initializer refusing it: the record's
                // decoder reads it, or throws the error that says what is wrong, with its coding path and field.
                return nil
            }
        }
        return models
    }
}
