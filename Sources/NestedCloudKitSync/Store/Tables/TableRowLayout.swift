import NestedCloudKitCodable

/// Where a statement over a record type's table has each column: each field's place and kind, and the system
/// columns' places. A table's statements that select every column (`SELECT *`, every read of models) share its
/// layout, built once with the table (``RecordTypeTable/layout``), so a read of one row builds nothing.
final class TableRowLayout: Sendable {
    /// The statement's column names, in order.
    let names: [String]
    /// The statement's column of each field.
    let columns: [String: Int]
    /// The kind of each of the statement's columns (`nil` for a system column, or a field no record had).
    let kinds: [CloudValue.Kind?]
    let nameColumn: Int
    let recordRowColumn: Int
    let zoneKeyColumn: Int
    let inexactColumn: Int

    /// `nil` if the statement doesn't select the system columns.
    init?(names: [String], fields: [RecordTypeTable.Column], positions: [String: Int]) {
        guard let nameColumn = names.firstIndex(of: "_record_name"),
            let recordRowColumn = names.firstIndex(of: "_record_row"),
            let zoneKeyColumn = names.firstIndex(of: "_zone_key"),
            let inexactColumn = names.firstIndex(of: "_inexact")
        else { return nil }
        var columns: [String: Int] = [:]
        var kinds: [CloudValue.Kind?] = []
        for (index, name) in names.enumerated() {
            if let position = positions[name] {
                columns[name] = index
                kinds.append(fields[position].kind)
            } else {
                kinds.append(nil)
            }
        }
        self.names = names
        self.columns = columns
        self.kinds = kinds
        self.nameColumn = nameColumn
        self.recordRowColumn = recordRowColumn
        self.zoneKeyColumn = zoneKeyColumn
        self.inexactColumn = inexactColumn
    }
}
