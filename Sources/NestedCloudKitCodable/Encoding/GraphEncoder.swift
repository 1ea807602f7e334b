import Foundation

/// The state of one `encode` call: the records made so far, the nested values still to encode, and which class
/// instances became which records.
///
/// A nested `CKEncodable` value isn't encoded where it is found: its record's fields only need the value's
/// record ID, so the value is queued and encoded after the record that holds it. The graph is walked in a loop,
/// not by recursion, so however deep it is, encoding uses the stack of one record at a time.
final class GraphEncoder {
    let options: EncodingOptions
    private var finishedRecords: [CloudRecord.ID: CloudRecord] = [:]
    private var finishingOrder: [CloudRecord.ID] = []
    private var pending: [(value: any CKEncodable, recordID: CloudRecord.ID, recordType: String, path: CodingPath)] = []
    private var recordIDsOfInstances: [ObjectIdentifier: CloudRecord.ID] = [:]
    fileprivate var validFieldNames: Set<String> = []

    init(options: EncodingOptions) {
        self.options = options
    }

    /// Encodes the root value and everything it reaches; returns the graph of their records.
    func encodeGraph(root: any CKEncodable) throws -> CloudRecordGraph {
        let rootID = try recordID(of: root, at: .root)
        var next = 0
        while next < pending.count {
            let (value, recordID, recordType, path) = pending[next]
            next += 1
            try encodeRecord(of: value, recordID: recordID, recordType: recordType, at: path)
        }
        return CloudRecordGraph(
            dependencyOrderedRecords: RecordOrdering.dependencyOrder(
                of: finishedRecords, finishingOrder: finishingOrder, rootID: rootID
            )
        )
    }

    /// The record ID of a `CKEncodable` value, for the reference that points to it; the value is queued to be
    /// encoded into its record.
    func recordID(of value: any CKEncodable, at path: CodingPath) throws -> CloudRecord.ID {
        // A class instance reached again is the same record, whether it is shared or closes a cycle.
        let instance = type(of: value) is AnyClass ? ObjectIdentifier(value as AnyObject) : nil
        if let instance, let knownID = recordIDsOfInstances[instance] { return knownID }

        let recordType = value.cloudKitRecordType
        let recordName = value.cloudKitIdentifier
        try RecordValidator.validateRecordType(recordType, at: path)
        try RecordValidator.validateRecordName(recordName, recordType: recordType, at: path)
        let id = CloudRecord.ID(recordName: recordName, zoneID: options.zoneID)
        if let instance { recordIDsOfInstances[instance] = id }
        pending.append((value, id, recordType, path))
        return id
    }

    private func encodeRecord(
        of value: any CKEncodable, recordID id: CloudRecord.ID, recordType: String, at path: CodingPath
    ) throws {
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
            return
        }
        finishedRecords[id] = record
        finishingOrder.append(id)
    }

    /// Validates a field name, remembering names already found valid: models repeat the same few names in every
    /// record.
    func validateFieldName(_ name: String, recordID: CloudRecord.ID, at path: CodingPath) throws {
        guard !validFieldNames.contains(name) else { return }
        try RecordValidator.validateFieldName(name, recordID: recordID, at: path)
        validFieldNames.insert(name)
    }
}
