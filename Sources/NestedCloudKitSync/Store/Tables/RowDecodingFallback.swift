import Foundation

/// Why a model isn't read from its table's row, and is read from its record instead.
enum RowDecodingFallback: Error {
    /// The model's type reads what a row never holds exactly (a nested value, a model it references, a list, an
    /// asset, its system fields): its reads take records from then on (``TableRowReading``).
    case modelNeedsRecords
    /// The row doesn't hold what the model reads (a field it has no value for, a row marked `_inexact`): this
    /// model is read from its record, whose decoder reads the value or says exactly what is wrong.
    case rowNeedsRecord
    /// The row references a record whose row the read hasn't fetched: the read fetches the next level of the graph
    /// (``TableGraphRows``) and decodes the model again.
    case needsReferencedRows
}
