/// Writes validated fields into the record being made, and keeps the tally for the record's size limit.
struct FieldWriter {
    var record: CloudRecord
    let graph: GraphEncoder
    private var clearedFieldNames: [String] = []
    private var fieldDataSize = 0

    init(record: CloudRecord, graph: GraphEncoder) {
        self.record = record
        self.graph = graph
    }

    mutating func set(_ value: CloudValue, named name: String, at path: CodingPath) throws {
        try graph.validateFieldName(name, recordID: record.id, at: path)
        // Slots have distinct names, so a name written twice comes from flattening a nested value onto a field
        // that already exists.
        guard record.fields.insertNew(value, named: name) else {
            throw CKCodableError.duplicateFieldName(name, recordID: record.id, at: path)
        }
        fieldDataSize += name.utf8.count + RecordValidator.estimatedSize(of: value)
    }

    mutating func clear(_ name: String, at path: CodingPath) throws {
        try graph.validateFieldName(name, recordID: record.id, at: path)
        clearedFieldNames.append(name)
    }

    /// The record, once it is known to fit CloudKit's size limit. A record that exists on the server clears the
    /// fields whose values are `nil`; a new record has nothing to clear.
    mutating func finish(at path: CodingPath) throws -> CloudRecord {
        guard fieldDataSize <= RecordValidator.maximumRecordSize else {
            throw CKCodableError.recordTooLarge(
                size: fieldDataSize, limit: RecordValidator.maximumRecordSize, recordID: record.id, at: path
            )
        }
        if record.systemFields != nil { record.clearedFieldNames = clearedFieldNames }
        return record
    }
}
