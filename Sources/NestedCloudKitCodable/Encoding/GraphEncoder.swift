import Foundation

/// The state of one `encode` call: every record made so far, which records are still being made, and which
/// class instances became which records.
///
/// Each nested `CKEncodable` value is encoded as it is reached, depth first; its record is finished before the
/// record that references it.
final class GraphEncoder {
    let options: EncodingOptions
    private var finishedRecords: [CloudRecord.ID: CloudRecord] = [:]
    private var finishingOrder: [CloudRecord.ID] = []
    private var recordsInProgress: Set<CloudRecord.ID> = []
    private var recordIDsOfInstances: [ObjectIdentifier: CloudRecord.ID] = [:]
    private var depth = 0
    fileprivate var validFieldNames: Set<String> = []

    init(options: EncodingOptions) {
        self.options = options
    }

    /// Encodes a `CKEncodable` value into its record (and the records of everything nested in it) and returns
    /// the record's ID, for the reference that points to it.
    func encodeRecord(_ value: any CKEncodable, at path: CodingPath) throws -> CloudRecord.ID {
        let recordType = value.cloudKitRecordType
        let recordName = value.cloudKitIdentifier
        try RecordValidator.validateRecordType(recordType, at: path)
        try RecordValidator.validateRecordName(recordName, recordType: recordType, at: path)
        let id = CloudRecord.ID(recordName: recordName, zoneID: options.zoneID)

        // A class instance reached again is the same record, whether it is finished (a shared child) or still
        // being encoded (a cycle): link to it without encoding it again.
        let instance = type(of: value) is AnyClass ? ObjectIdentifier(value as AnyObject) : nil
        if let instance, let knownID = recordIDsOfInstances[instance] { return knownID }
        // A value can't contain itself, so another value with the ID of a record still being encoded is a clash.
        if recordsInProgress.contains(id) { throw CKCodableError.conflictingRecordID(id, recordType: recordType, at: path) }
        guard depth < options.maximumDepth else {
            throw CKCodableError.depthLimitExceeded(options.maximumDepth, recordID: id, at: path)
        }

        if let instance { recordIDsOfInstances[instance] = id }
        recordsInProgress.insert(id)
        depth += 1
        defer {
            recordsInProgress.remove(id)
            depth -= 1
        }

        let encoder = RecordEncoder(
            graph: self, recordID: id, recordType: recordType, path: path,
            ignoredProperties: value.ignoredProperties(), referenceActions: value.cloudKitReferenceActions()
        )
        try value.encode(to: encoder)
        let record = try encoder.makeRecord()

        // A value reached again (a shared child, a diamond) is encoded once; a different value with the same ID
        // would silently overwrite the first on save, so it is an error.
        if let existing = finishedRecords[id] {
            guard existing == record else {
                throw CKCodableError.conflictingRecordID(id, recordType: recordType, at: path)
            }
            return id
        }
        finishedRecords[id] = record
        finishingOrder.append(id)
        return id
    }

    /// The finished records, each after the records it references and the root last.
    func makeGraph(rootID: CloudRecord.ID) -> CloudRecordGraph {
        CloudRecordGraph(
            dependencyOrderedRecords: RecordOrdering.dependencyOrder(
                of: finishedRecords, finishingOrder: finishingOrder, rootID: rootID
            )
        )
    }
}

extension GraphEncoder {
    /// Validates a field name, remembering names already found valid: models repeat the same few names in every
    /// record.
    func validateFieldName(_ name: String, recordID: CloudRecord.ID, at path: CodingPath) throws {
        guard !validFieldNames.contains(name) else { return }
        try RecordValidator.validateFieldName(name, recordID: recordID, at: path)
        validFieldNames.insert(name)
    }
}
