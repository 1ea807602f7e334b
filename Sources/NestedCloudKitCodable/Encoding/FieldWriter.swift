/// Writes validated fields into the record being made, and keeps the tally for the record's size limit.
///
/// The record is made where it ends up, at the end of the graph's records: made in the writer, it was copied out
/// of it, and into the graph's list, and each copy retained every part of it (a fifth of encoding a small mapped
/// record). The optimizer copies a record this large whenever it moves one, even where the source code moves it.
struct FieldWriter {
    let graph: GraphEncoder
    /// The record's index in the graph's ``GraphEncoder/records``.
    let recordIndex: Int
    private var clearedFieldNames: [String] = []
    private var fieldDataSize = 0
    /// Whether a flattened nested value has written fields: from then on a name may repeat another field's, so
    /// every name is looked up. Before, the record's own field names are distinct and need no lookup.
    var mayRepeatNames = false
    /// The field names of the last record of the same type: a name that is the name at the same position there
    /// was validated already.
    private let knownNames: [String]
    /// Whether every name so far was the known name at its position.
    private var followsKnownNames = true

    /// Starts an empty record with room for `capacity` fields, at the end of the graph's records.
    init(
        recordType: String, id: CloudRecord.ID, capacity: Int, systemFields: CloudRecord.SystemFields? = nil,
        graph: GraphEncoder, knownNames: [String] = []
    ) {
        recordIndex = graph.startRecord(recordType: recordType, id: id, capacity: capacity, systemFields: systemFields)
        self.graph = graph
        self.knownNames = knownNames
    }

    /// The record being made, read and changed where the graph keeps it.
    var record: CloudRecord {
        _read { yield graph.records[recordIndex] }
        nonmutating _modify { yield &graph.records[recordIndex] }
    }

    /// Whether each of the record's field names was the known name at its position: the template needn't change.
    /// A record with fewer fields (an optional left out) follows it too, so records that differ only by their
    /// missing optionals don't replace the template in turn.
    var followedKnownNames: Bool { followsKnownNames }

    /// Whether the name is the known name at the position of the next field.
    private func isKnown(_ name: String) -> Bool {
        knownNames.hasSameBytes(at: record.fields.count, as: name)
    }

    /// Sets a field named by a key of the record's own value, under `parent`, its value's path. While the names
    /// follow the known ones, nothing is checked and no field path is made, nor a closure to make one: retaining
    /// the path and the name to capture them cost a fifth of writing a small record's fields.
    mutating func set(_ value: CloudValue, named name: String, under parent: CodingPath) throws {
        guard !mayRepeatNames, isKnown(name) else {
            return try set(value, named: name, at: FieldPath(parent: parent, key: NamedKey(name)))
        }
        append(value, named: name)
    }

    /// Sets a field. The field's path is only made for an error: a record's fields are nearly all fine, and making
    /// and releasing a path per field costs a tenth of writing one.
    mutating func set(_ value: CloudValue, named name: String, at path: @autoclosure () -> FieldPath) throws {
        if !isKnown(name) {
            followsKnownNames = false
            try RecordValidator.validateFieldName(name, recordID: record.id, at: path())
        }
        // Slots have distinct names, so a name written twice comes from flattening a nested value onto a field
        // that already exists.
        if mayRepeatNames {
            guard record.fields.insertNew(value, named: name), !clearedFieldNames.contains(name) else {
                throw CKCodableError.duplicateFieldName(name, recordID: record.id, at: path().path)
            }
        } else {
            return append(value, named: name)
        }
        fieldDataSize += name.utf8.count + RecordValidator.estimatedSize(of: value)
    }

    /// Adds a field whose name is valid and not taken, and counts its size.
    private mutating func append(_ value: CloudValue, named name: String) {
        fieldDataSize += name.utf8.count + RecordValidator.estimatedSize(of: value)
        record.fields.appendNew(value, named: name)
    }

    mutating func clear(_ name: String, at path: FieldPath) throws {
        try RecordValidator.validateFieldName(name, recordID: record.id, at: path)
        guard record.fields[name] == nil, !clearedFieldNames.contains(name) else {
            throw CKCodableError.duplicateFieldName(name, recordID: record.id, at: path.path)
        }
        clearedFieldNames.append(name)
    }

    /// Checks that the record fits CloudKit's size limit. A record that exists on the server clears the fields
    /// whose values are `nil`; a new record has nothing to clear, unless the encoder lists what each model cleared
    /// (``EncodingOptions/Settings/listsClearedFields``).
    func finish(at path: CodingPath) throws {
        let total = fieldDataSize
        guard total <= RecordValidator.maximumRecordSize else {
            let sizes = record.fields.map {
                ($0.name, $0.name.utf8.count + RecordValidator.estimatedSize(of: $0.value))
            }
            let largest = sizes.sorted { $0.1 > $1.1 }.prefix(3).map { (name: $0.0, size: $0.1) }
            throw CKCodableError.recordTooLarge(
                size: total, limit: RecordValidator.maximumRecordSize, largestFields: largest, recordID: record.id,
                at: path
            )
        }
        if record.hasSystemFields || graph.options.listsClearedFields { record.clearedFieldNames = clearedFieldNames }
    }
}
