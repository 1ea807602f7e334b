import Foundation

/// Which record a value becomes: its ID and type, validated, and where it was found.
struct RecordIdentity {
    let recordID: CloudRecord.ID
    let recordType: String
    let path: CodingPath
    /// The class instance the value is, if it is one.
    let instance: ObjectIdentifier?
}

/// A nested value found in a field: its record's identity, and the value to encode once the field is written.
struct PendingRecord {
    let value: any CKEncodable
    let identity: RecordIdentity

    var recordID: CloudRecord.ID { identity.recordID }
}

/// A reference list's models, queued once for all of them: each is encoded from the list in place, by its index,
/// where queuing each on its own would copy it into a box of its own.
protocol NestedValueList {
    /// Encodes the record of the value at `index`, as the type it is.
    func encodeRecord(at index: Int, _ identity: RecordIdentity, firstQueued: Int, in graph: GraphEncoder) throws
}

extension Array: NestedValueList where Element: CKEncodable {
    func encodeRecord(at index: Int, _ identity: RecordIdentity, firstQueued: Int, in graph: GraphEncoder) throws {
        try withUnsafeBufferPointer { values in
            try graph.encodeRecord(of: values[index], identity, firstQueued: firstQueued)
        }
    }
}

/// The state of one `encode` call: the records made so far, the nested values still to encode, and which class
/// instances became which records.
///
/// A nested `CKEncodable` value isn't encoded where it is found: its parent's field only needs its record ID, so
/// the value is queued when the parent's record is finished (a value in a field that was overwritten or ignored
/// is never queued) and encoded after. The graph is walked in a loop, not by recursion, so however deep it is,
/// encoding uses the stack of one record at a time.
///
/// A class instance reached again is the same record and isn't encoded again. A struct has no identity, so a
/// struct reached again with a known record ID is encoded again and compared with the first, which catches two
/// different values claiming one ID; its own nested values are checked too for the first few times an ID comes
/// back, after which only its own record is compared, so shared structs can't make the work grow exponentially.
///
/// The encoder's state isn't checked for exclusive access at run time (`@exclusivity(unchecked)`): one encode uses
/// it, on one thread, and no access to it is held across a call into a model.
final class GraphEncoder {
    let options: EncodingOptions
    /// The finished records, in the order they were finished, and last the one being made, which its
    /// ``FieldWriter`` writes in place. Records are made one at a time: a nested value is queued, not encoded
    /// inside its parent.
    @exclusivity(unchecked) var records: [CloudRecord] = []
    /// For each record ID: how often it was queued, and where it was queued first. Looked up once per value,
    /// when it is queued: the queue carries the answer to where the value's record goes. Keyed by record name, as
    /// every record an encode makes is in the encoder's zone: a key is one string to copy and compare, not three.
    @exclusivity(unchecked) private var entries: [String: Entry] = [:]
    @exclusivity(unchecked) private var queue: [Queued] = []
    /// For each position of the queue encoded so far, the index in ``records`` of its record: a value queued again
    /// finds the first one's record here, by the position its entry gave it, without looking its ID up again.
    @exclusivity(unchecked) private var recordIndexOfQueued: [Int] = []

    private struct Entry {
        var timesQueued = 0
        /// The queue position of the first value queued with the ID.
        let firstQueued: Int
    }

    /// A value waiting for its record to be encoded: one nested value in a box, or a list's, by index.
    private enum QueuedValue {
        case one(any CKEncodable)
        case element(of: any NestedValueList, at: Int)
    }

    private struct Queued {
        let value: QueuedValue
        let identity: RecordIdentity
        /// Whether the record's nested values are queued too (not once an ID has come back many times).
        var checksNestedValues: Bool
        /// The queue position of the first value with the record's ID: this one's own, unless it came back.
        var firstQueued: Int
    }
    /// The root's record ID: the first record's, before anything is queued (the root has queue position 0, the
    /// first value queued 1).
    @exclusivity(unchecked) private var rootID: CloudRecord.ID?
    /// The root's ID isn't in ``entries`` yet: a value with no nested values never hashes it.
    @exclusivity(unchecked) private var isRootIndexPending = false
    @exclusivity(unchecked) private var queuedInstances: Set<ObjectIdentifier> = []
    /// The model type met last, what it declares and its template: a list of nested values is of one type, and
    /// is encoded without looking its type up again.
    @exclusivity(unchecked) private var lastType: LastType?
    @exclusivity(unchecked) private var recordIDsOfInstances: [ObjectIdentifier: CloudRecord.ID] = [:]
    /// Whether the record being encoded is the root's.
    @exclusivity(unchecked) private var isEncodingRoot = true
    /// Whether no record other than the root's has a reference (see ``rootReferencesFollowRecords()``).
    @exclusivity(unchecked) private var recordsAreInQueueOrder = true
    /// The record type a nested value had last, known to be valid.
    @exclusivity(unchecked) private var lastValidRecordType: String?
    /// Whether the record being encoded queues its nested values (`false` while only comparing a duplicate).
    @exclusivity(unchecked) private var queuesNestedValues = true

    /// How many times a struct's record ID may come back with its nested values checked again.
    static let nestedChecksPerRecord = 4

    init(options: EncodingOptions) {
        self.options = options
    }

    /// Encodes the root value and everything it reaches; returns their records in dependency order, root last.
    ///
    /// The root is encoded as the type it is, and a reference list's models from their list: only a model alone in
    /// a field is boxed, so a value with no nested values, the most common, is never copied into a box.
    func encodeRecords<Root: CKEncodable>(root: Root) throws -> [CloudRecord] {
        let rootIdentity = try identity(of: root, at: .root)
        if let instance = rootIdentity.instance { queuedInstances.insert(instance) }
        rootID = rootIdentity.recordID
        isRootIndexPending = true
        try encodeRecord(of: root, rootIdentity, firstQueued: 0)
        isEncodingRoot = false
        // The root's nested values are most of the graph's records, usually: room for them at once.
        if !queue.isEmpty { records.reserveCapacity(queue.count + 1) }
        var next = 0
        while next < queue.count {
            let queued = queue[next]
            next += 1
            queuesNestedValues = queued.checksNestedValues
            switch queued.value {
            case .one(let value):
                try encodeRecord(of: value, queued.identity, firstQueued: queued.firstQueued)
            case .element(let list, let index):
                try list.encodeRecord(at: index, queued.identity, firstQueued: queued.firstQueued, in: self)
            }
        }
        // A value with no nested values, the most common, is its one record.
        guard records.count > 1 else { return records }
        if recordsAreInQueueOrder, rootReferencesFollowRecords() {
            // The root's references are the other records, in the order they were finished, and no other record
            // references anything: walking the references would give the records in that order, the root last.
            records.append(records.removeFirst())
            return records
        }
        return RecordOrdering.dependencyOrder(of: records) { id in
            // Every record an encode makes is in the encoder's zone: a reference to another zone is to no record here.
            guard id.zoneID == options.zoneID else { return nil }
            return entries[id.recordName].map { recordIndexOfQueued[$0.firstQueued] }
        }
    }

    /// The record identity of a nested value, validated; the value is queued by ``enqueue(_:)`` when the field
    /// that references it is written.
    func pendingRecord(for value: any CKEncodable, at path: CodingPath) throws -> PendingRecord {
        PendingRecord(value: value, identity: try identity(of: value, at: path))
    }

    /// The record a value becomes, its record type and name validated.
    func identity<Value: CKEncodable>(of value: Value, at path: CodingPath) throws -> RecordIdentity {
        let instance = Value.self is AnyClass ? ObjectIdentifier(value as AnyObject) : nil
        let recordType = value.cloudKitRecordType
        if let instance, let knownID = recordIDsOfInstances[instance] {
            return RecordIdentity(recordID: knownID, recordType: recordType, path: path, instance: instance)
        }
        let recordName = value.cloudKitIdentifier
        // The values of a list nearly always have one record type: it is checked once. Compared byte for byte, as
        // `==` would take a canonically equivalent name (a Kelvin sign for a K) for the valid one.
        if !(lastValidRecordType?.hasSameBytes(as: recordType) ?? false) {
            try RecordValidator.validateRecordType(recordType, at: path)
            lastValidRecordType = recordType
        }
        try RecordValidator.validateRecordName(recordName, recordType: recordType, at: path)
        let id = CloudRecord.ID(recordName: recordName, zoneID: options.zoneID)
        if let instance { recordIDsOfInstances[instance] = id }
        return RecordIdentity(recordID: id, recordType: recordType, path: path, instance: instance)
    }

    /// Starts a record at the end of ``records``, empty, with room for `capacity` fields; returns its index.
    func startRecord(
        recordType: String, id: CloudRecord.ID, capacity: Int, systemFields: CloudRecord.SystemFields?
    ) -> Int {
        records.append(
            CloudRecord(
                recordType: recordType, id: id, fields: CloudRecord.Fields(capacity: capacity),
                systemFields: systemFields))
        return records.count - 1
    }

    /// Where the values a reference list stages (``stage(_:at:_:)``) start in the queue.
    var stagingMark: Int { queue.count }

    /// Puts a value of a reference list at the end of the queue, not yet counted as queued: the list's field may
    /// still fail, and a list's values are put straight where they are encoded from, not gathered first.
    /// ``commitStaged(from:)`` queues them once the field is written, ``discardStaged(from:)`` drops them.
    func stage(_ list: any NestedValueList, at index: Int, _ identity: consuming RecordIdentity) {
        guard queuesNestedValues else { return }
        queue.append(
            Queued(
                value: .element(of: list, at: index), identity: identity, checksNestedValues: true, firstQueued: 0))
    }

    /// Makes room in the queue for a list's values, before they are staged one by one.
    func reserveStaging(_ count: Int) {
        guard queuesNestedValues else { return }
        queue.reserveCapacity(queue.count + count)
    }

    /// Queues the values staged since `mark`, as ``enqueue(_:)`` queues one: an instance already queued is dropped,
    /// and each ID is counted.
    func commitStaged(from mark: Int) {
        guard queuesNestedValues, mark < queue.count else { return }
        indexRoot()
        reserveEntries(for: queue.count - mark)
        // Read and updated in place: a copy of each queued value (its list and its ID's strings) cost a fifth of
        // queuing it.
        let kept = queue.withUnsafeMutableBufferPointer { staged in
            var kept = mark
            for index in mark..<staged.count {
                if let instance = staged[index].identity.instance,
                    !queuedInstances.insert(instance).inserted
                {
                    continue
                }
                // The root is position 0, outside the queue.
                let first = Self.countQueued(
                    &entries[staged[index].identity.recordID.recordName, default: Entry(firstQueued: kept + 1)])
                staged[index].checksNestedValues = first.times < Self.nestedChecksPerRecord
                staged[index].firstQueued = first.position
                if kept != index { staged.swapAt(kept, index) }
                kept += 1
            }
            return kept
        }
        if kept < queue.count { queue.removeSubrange(kept...) }
    }

    /// Drops the values staged since `mark`: their field wasn't written.
    func discardStaged(from mark: Int) {
        if mark < queue.count { queue.removeSubrange(mark...) }
    }

    /// Makes room in ``entries`` for `count` more IDs, at least doubling it: room for exactly the IDs of each list
    /// would rehash every ID of the lists before.
    private func reserveEntries(for count: Int) {
        let needed = entries.count + count
        if entries.capacity < needed { entries.reserveCapacity(max(needed, entries.capacity * 2)) }
    }

    /// Queues a nested value whose reference has been written.
    func enqueue(_ pending: PendingRecord) {
        guard queuesNestedValues else { return }
        if let instance = pending.identity.instance {
            // The same instance is the same record: shared, or closing a cycle.
            guard queuedInstances.insert(instance).inserted else { return }
        }
        indexRoot()
        // The root is position 0, outside the queue.
        let position = queue.count + 1
        let first = Self.countQueued(
            &entries[pending.recordID.recordName, default: Entry(firstQueued: position)])
        queue.append(
            Queued(
                value: .one(pending.value), identity: pending.identity,
                checksNestedValues: first.times < Self.nestedChecksPerRecord, firstQueued: first.position))
    }

    /// Encodes one value's record, as the type it is (a nested value is opened from its box, or read from its list).
    func encodeRecord<Value: CKEncodable>(
        of value: Value, _ pending: RecordIdentity, firstQueued: Int
    ) throws {
        let typeKey = ObjectIdentifier(Value.self)
        let (type, template) = modelType(of: Value.self, key: typeKey)
        let fieldOptions = RecordFieldOptions.of(value, type: type)
        // The record is made in place, at the end of ``records`` (see ``FieldWriter``), and dropped from there if
        // it repeats one made before.
        var keysOutsideTemplate: [String]?
        if try encodeMapped(
            value, pending, mapping: type.mapping, fieldOptions: fieldOptions, template: template,
            keysOutsideTemplate: &keysOutsideTemplate)
        {
            if let keys = keysOutsideTemplate {
                remember(RecordTemplate(keys: keys, fieldNames: records[records.count - 1].fields.names), for: typeKey)
            }
        } else {
            let encoder = RecordEncoder(
                graph: self, recordID: pending.recordID, recordType: pending.recordType, path: pending.path,
                fieldOptions: fieldOptions, template: template)
            try value.encode(to: encoder)
            try encoder.makeRecord()
            try encoder.checkFieldOptions(of: value)
            if !encoder.followedKnownNames {
                remember(RecordTemplate(fieldNames: records[records.count - 1].fields.names), for: typeKey)
            }
        }
        let made = records.count - 1

        if !isEncodingRoot, recordsAreInQueueOrder, records[made].hasReferences { recordsAreInQueueOrder = false }
        // The root, when it queued no nested value: the only record.
        if isRootIndexPending { return }
        // A value reached again (a shared child, a diamond) gives one record; a different value with the same ID
        // would silently overwrite the first on save, so it is an error. The first value with the ID was queued,
        // and so encoded, before any other.
        let position = recordIndexOfQueued.count
        if firstQueued < position {
            let index = recordIndexOfQueued[firstQueued]
            recordIndexOfQueued.append(index)
            guard records[index] == records[made] else {
                throw CKCodableError.conflictingRecordID(
                    pending.recordID, recordTypes: (records[index].recordType, records[made].recordType),
                    at: pending.path)
            }
            records.removeLast()
            return
        }
        recordIndexOfQueued.append(made)
    }

    /// Makes the record of a value whose type has a record mapping, written through it, at the end of ``records``,
    /// with the keys it wrote in `keysOutsideTemplate` if they didn't follow the template; `false`, making nothing,
    /// for any other value.
    private func encodeMapped<Value: CKEncodable>(
        _ value: Value, _ pending: RecordIdentity, mapping: (any CloudRecordEncodable.Type)?,
        fieldOptions: RecordFieldOptions, template: RecordTemplate, keysOutsideTemplate: inout [String]?
    ) throws -> Bool {
        guard let mapping else { return false }
        var writer = CloudRecordWriter(
            graph: self, recordID: pending.recordID, recordType: pending.recordType, path: pending.path,
            fieldOptions: fieldOptions, template: template)
        guard try mapping.encodeFields(of: value, to: &writer) else {
            // The writer started a record the value didn't write.
            records.removeLast()
            return false
        }
        if !writer.followedTemplate { keysOutsideTemplate = writer.writtenKeys }
        try writer.finish(value)
        return true
    }

    /// The model type met last: what it declares, and the template of its last record.
    private struct LastType {
        let key: ObjectIdentifier
        let type: EncodedModelType
        var template: RecordTemplate
    }

    /// What a model type declares and its template: the last type's, or the process's (one lock for both).
    private func modelType(of type: any CKEncodable.Type, key: ObjectIdentifier) -> (
        EncodedModelType, RecordTemplate
    ) {
        if let last = lastType, last.key == key { return (last.type, last.template) }
        let entry = EncodedModelTypes.shared.entry(for: key)
        let modelType: EncodedModelType
        if let known = entry.type {
            modelType = known
        } else {
            modelType = EncodedModelType(type)
            EncodedModelTypes.shared.set(modelType, for: key)
        }
        let template = entry.template ?? RecordTemplate()
        lastType = LastType(key: key, type: modelType, template: template)
        return (modelType, template)
    }

    /// Makes a template the type's, in this encode and in the process.
    private func remember(_ template: RecordTemplate, for type: ObjectIdentifier) {
        if lastType?.key == type { lastType?.template = template }
        EncodedModelTypes.shared.set(template, for: type)
    }

    /// Whether the root's references, in field order, are exactly the other records in the order they were
    /// finished: nearly always, when the root is the only record with references (a set's references are sorted,
    /// a reference may repeat or point outside the graph; any of these takes the walk).
    private func rootReferencesFollowRecords() -> Bool {
        guard let root = records.first else { return true }
        var next = 1
        for (_, value) in root.fields {
            switch value {
            case .reference(let reference):
                guard next < records.count, records[next].id == reference.recordID else { return false }
                next += 1
            case .referenceList(let references):
                for reference in references {
                    guard next < records.count, records[next].id == reference.recordID else { return false }
                    next += 1
                }
            default: continue
            }
        }
        return next == records.count
    }

    /// Puts the root's ID in ``entries``, queued once, before anything else is looked up there.
    private func indexRoot() {
        guard isRootIndexPending, let rootID else { return }
        isRootIndexPending = false
        entries[rootID.recordName] = Entry(timesQueued: 1, firstQueued: 0)
    }

    /// Counts one more queuing of an entry, in place; returns the count before, and where the ID was queued first.
    private static func countQueued(_ entry: inout Entry) -> (times: Int, position: Int) {
        defer { entry.timesQueued += 1 }
        return (entry.timesQueued, entry.firstQueued)
    }
}
