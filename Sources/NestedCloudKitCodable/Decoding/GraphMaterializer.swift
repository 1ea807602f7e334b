import Foundation

/// Builds a decode's values from the records in hand: each record decoded once per type and cached where another
/// parent, a cycle or a class instance needs it, a deep graph deepest first (so that building it costs no more stack
/// than a shallow one), and the records it reaches that resolving hadn't fetched noted for the next round.
///
/// It holds no state of its own: the records, the cache and the flags are the session's (``DecodingSession``).
struct GraphMaterializer {
    let session: DecodingSession

    private typealias TypeKey = DecodingSession.TypeKey

    /// Decodes the root's value from the records in hand, each record inside its parent's initializer, without
    /// walking the graph first. Walking a graph costs about as much as decoding it, and few are deeper than
    /// ``DecodingSession/nestedDecodingDepthLimit``: only then is the graph resolved, and decoded deepest first.
    ///
    /// The value is returned as it is, never as an optional: an optional of a type known only at run time needs
    /// its metadata looked up, which cost a twentieth of decoding a flat record.
    func materializeInHand<Value: CKDecodable>(_ type: Value.Type) throws -> Value {
        do {
            let value = try materialize(Value.self)
            if !session.nestedTooDeep { return value }
        } catch {
            if !session.nestedTooDeep { throw error }
        }
        // Whatever the models made of the error (a `try?` can turn it into a nil), the values built are discarded.
        session.nestedTooDeep = false
        session.clearCache()
        try GraphResolver(session: session).resolveInHand(Value.self)
        return try materialize(Value.self)
    }

    /// Decodes the root's value, every record deepest first.
    func materialize<Value: CKDecodable>(_ type: Value.Type) throws -> Value {
        session.probe = nil
        _ = session.takeUnresolved()
        // Nothing has met the root but this: no reference to it, no value of it, nothing to decode first.
        if session.isRootIndexPending {
            return try decode(Value.self, record: session.rootRecord, at: .root, nesting: 0)
        }
        decodeDeepestFirst()
        let rootSlot = session.rootSlot
        // The root's value isn't cached (nothing else holds it), and is built as its own type, not boxed as any
        // model: unless a reference back to the root decoded it already, or is decoding it (a cycle).
        if let entry = session.entry(rootSlot, as: TypeKey(Value.self)), !entry.isDecodedOnce {
            return try cached(entry, as: Value.self, slot: rootSlot, at: .root)
        }
        // A record that references the root needs it marked as being decoded, to find the cycle.
        if session.timesReached(rootSlot) > 0, session.recordIndex(of: rootSlot) != nil {
            return try decodeRecord(Value.self, slot: rootSlot, at: .root, nesting: 0)
        }
        return try decode(
            Value.self, record: session.recordIndex(of: rootSlot) ?? session.rootRecord, at: .root, nesting: 0)
    }

    /// Decodes every root's value; a record shared by several roots is decoded once.
    func materializeRoots<Value: CKDecodable>(_ type: Value.Type, roots: [CloudRecord], referencing: [Bool]) throws
        -> [Value]
    {
        session.probe = nil
        _ = session.takeUnresolved()
        // A root that references nothing but that another root references was reached once more, as a root: so
        // counted, its value is kept for the other (see `keepsValue(of:as:)`).
        let reachedRootSlots: [Int?] =
            session.discovered.isEmpty ? [] : zip(roots, referencing).map { $1 ? nil : session.knownSlot(of: $0.id) }
        for case let slot? in reachedRootSlots { session.noteReached(slot) }
        decodeDeepestFirst()
        var values: [Value] = []
        values.reserveCapacity(roots.count)
        // A root decoded from the records in hand is put there only while it is decoded: a decoder reads its
        // record from the session's records.
        let rootsInHand = session.records.count
        defer { session.removeTransientRecords(from: rootsInHand) }
        for (index, (root, references)) in zip(roots, referencing).enumerated() {
            // A root that references others, or that another root references, goes through the cache, so that it
            // is decoded once; any other root is decoded from the record in hand.
            if references {
                values.append(try decodeRecord(Value.self, slot: session.slot(for: root.id), at: .root, nesting: 0))
            } else if !reachedRootSlots.isEmpty, let slot = reachedRootSlots[index],
                session.recordIndex(of: slot) != nil
            {
                values.append(try decodeRecord(Value.self, slot: slot, at: .root, nesting: 0))
            } else {
                let record = session.appendTransientRecord(root)
                values.append(try decode(Value.self, record: record, at: .root, nesting: 0))
            }
        }
        return values
    }

    /// A cached entry's value, as the type it was cached as; its error, or a cycle if it is still being decoded.
    private func cached<Value: CKDecodable>(
        _ entry: DecodingSession.CacheEntry, as type: Value.Type, slot: Int, at path: CodingPath
    ) throws -> Value {
        let id = session.id(of: slot)
        switch entry {
        case .decoded(let value):
            guard let typed = Self.open(value, as: Value.self) else {
                throw CKCodableError.typeMismatch(
                    expected: "\(Value.self)", found: "\(Swift.type(of: value))", at: session.location(of: id, at: path)
                )
            }
            return typed
        case .failed(let error): throw error
        case .decoding: throw CKCodableError.referenceCycle(id, at: session.location(of: id, at: path))
        case .decodedOnce:
            // Callers decode the record again instead of asking for a value that wasn't kept.
            throw CKCodableError.typeMismatch(
                expected: "\(Value.self)", found: "a value not kept", at: session.location(of: id, at: path))
        }
    }

    /// A cached value as the type it was decoded as. A value cached under a type's key is of that type, unless the
    /// type is a class and the value a subclass's instance: only that needs a dynamic cast.
    private static func open<Value>(_ value: any CKDecodable, as type: Value.Type) -> Value? {
        func typed<Stored: CKDecodable>(_ stored: Stored) -> Value? {
            Stored.self == Value.self ? unsafeBitCast(stored, to: Value.self) : stored as? Value
        }
        return typed(value)
    }

    /// Decodes the records below the roots, deepest first, so that each is decoded with no record nested inside
    /// it: the parents find them cached, and the stack doesn't grow with the graph's depth.
    private func decodeDeepestFirst() {
        // A graph no deeper than the nested-decoding limit is decoded each record inside its parent, with no value
        // kept that only one parent needs.
        guard session.isDeep else { return }
        session.keepsEveryValue = true
        for node in session.discovered.reversed() where node.depth > 0 {
            if let type = node.type, session.recordIndex(of: node.slot) != nil {
                _ = try? decodeRecord(type, slot: node.slot, at: node.path, nesting: 0)
            }
        }
    }

    /// The value of a record, decoded once per type and cached; the result (value or error) is remembered, so a
    /// parent sees exactly what decoding the record on its own would give.
    ///
    /// Where references weren't counted (records in hand decoded without resolving, see ``materializeInHand(_:)``),
    /// a struct's value is kept only once the record is reached a second time: most records of a graph are reached
    /// once, and keeping each value boxed it as any model (an allocation) and copied it back, a fifth of decoding
    /// a graph. A record reached again is decoded a second time, and its value kept from then on; the mark the
    /// first decode leaves still finds a cycle. Where resolving counted the references, a record reached more than
    /// once is kept from the first decode. A class instance is always kept, so that it is one instance however it
    /// is reached.
    func decodeRecord<Value: CKDecodable>(_ type: Value.Type, slot: Int, at path: CodingPath, nesting: Int)
        throws -> Value
    {
        let key = TypeKey(Value.self)
        let earlier = session.entry(slot, as: key)
        if let earlier, !earlier.isDecodedOnce { return try cached(earlier, as: Value.self, slot: slot, at: path) }
        guard let index = session.recordIndex(of: slot) else {
            let id = session.id(of: slot)
            throw CKCodableError.missingRecord(id, at: session.location(of: id, at: path))
        }
        guard nesting <= DecodingSession.nestedDecodingDepthLimit else {
            session.nestedTooDeep = true
            throw CKCodableError.depthLimitExceeded(
                DecodingSession.nestedDecodingDepthLimit, at: session.location(of: session.id(of: slot), at: path))
        }
        guard keepsValue(of: slot, as: Value.self) else {
            return try decode(Value.self, record: index, at: path, nesting: nesting)
        }
        let keepsThisValue =
            earlier != nil || session.timesReached(slot) > 0 || session.keepsEveryValue || Value.self is AnyClass
        session.setEntry(.decoding, slot, as: key)
        do {
            let value = try decode(Value.self, record: index, at: path, nesting: nesting)
            session.setEntry(keepsThisValue ? .decoded(value) : .decodedOnce, slot, as: key)
            return value
        } catch {
            session.setEntry(.failed(error), slot, as: key)
            throw error
        }
    }

    /// Whether a record's value is cached. Not when resolving met exactly one reference to the record and the
    /// value is a struct: its one parent is the only one to decode it, and it can't close a cycle on its own (a
    /// cycle goes through a record met twice, or through the root, which is always cached). Keeping it would box
    /// it as any model and copy it back. A class instance is always kept, so that it is one instance however
    /// it is reached; so is every value of a graph decoded without resolving, whose references weren't counted.
    private func keepsValue<Value>(of slot: Int, as type: Value.Type) -> Bool {
        session.keepsEveryValue || session.timesReached(slot) != 1 || slot == session.rootSlot
            || Value.self is AnyClass
    }

    /// Runs the model's initializer on a record, and checks the record's type.
    private func decode<Value: CKDecodable>(
        _ type: Value.Type, record index: Int, at path: CodingPath, nesting: Int
    ) throws -> Value {
        let decoder = ValueDecoder(
            session: session, source: .record, path: path, record: index, field: nil, nesting: nesting)
        let value: Value
        do {
            value = try initialize(type, from: decoder)
        } catch {
            throw CKCodableError.fromModel(error, recordID: session.records[index].id, recordPath: path)
        }
        guard value.cloudKitRecordType == session.records[index].recordType else {
            throw CKCodableError.recordTypeMismatch(
                expected: value.cloudKitRecordType, found: session.records[index].recordType,
                at: session.location(of: session.records[index].id, at: path))
        }
        return value
    }

    /// Runs a model type's initializer on a record's decoder: its record mapping if it has one, else `init(from:)`.
    /// The runtime caches the conformance lookup, so asking each time costs less than a table of our own would.
    func initialize<Value: CKDecodable>(_ type: Value.Type, from decoder: ValueDecoder) throws -> Value {
        guard let mapping = session.mapping(of: Value.self) else { return try Value(from: decoder) }
        return try Self.initialize(mapping, as: Value.self, from: decoder)
    }

    /// Runs a record mapping's initializer, as the model type it is.
    private static func initialize<Mapped: CloudRecordDecodable, Value>(
        _ mapped: Mapped.Type, as type: Value.Type, from decoder: ValueDecoder
    ) throws -> Value {
        // Mapped is Value, opened from its conformance.
        guard Mapped.self == Value.self else {
            throw CKCodableError.typeMismatch(expected: "\(Value.self)", found: "\(Mapped.self)", at: decoder.location)
        }
        // So the cast can't fail, and it moves the value: the runtime casts a type to itself by taking the value as
        // it is. `unsafeBitCast` would copy it (a retain and a release of each of its fields, a sixth of decoding a
        // flat model); `as?` needs the metadata of an optional, and a buffer to build the value in place its own,
        // each looked up in the runtime's table on every call.
        return try Mapped(fields: CloudRecordReader(decoder: decoder)) as! Value
    }

    // MARK: References

    /// The value of a referenced record, or `nil` if the record doesn't exist. While probing, a placeholder.
    func decodeReferenced<Value: CKDecodable>(
        _ type: Value.Type, reference: CloudReference, at path: CodingPath, field: String?, nesting: Int
    ) throws -> Value? {
        switch try locate(reference, as: Value.self, at: path, field: field) {
        case .slot(let slot): return try decodeRecord(Value.self, slot: slot, at: path, nesting: nesting + 1)
        case .missing: return nil
        case .placeholder: return try Value(from: PlaceholderDecoder(nesting: 0))
        }
    }

    /// The value of a referenced record that must exist, read from a field of the parent record: a missing record
    /// is ``CKCodableError/Code/missingRecord`` at that field. While probing, a placeholder.
    ///
    /// Unlike ``decodeReferenced(_:reference:at:field:nesting:)``, nothing here is optional: a mapped model's list
    /// of nested models reads each as its own type, with no optional to make or cast through.
    func decodeRequiredReference<Value: CKDecodable>(
        _ type: Value.Type, reference: CloudReference, at path: CodingPath, parent: CloudRecord.ID, field: String?,
        nesting: Int
    ) throws -> Value {
        switch try locate(reference, as: Value.self, at: path, field: field) {
        case .slot(let slot): return try decodeRecord(Value.self, slot: slot, at: path, nesting: nesting + 1)
        case .missing:
            throw CKCodableError.missingRecord(
                reference.recordID, at: DecodingLocation(path: path, recordID: parent, field: field))
        case .placeholder: return try Value(from: PlaceholderDecoder(nesting: 0))
        }
    }

    /// The values of a reference list's records, in order, each read as
    /// ``decodeRequiredReference(_:reference:at:parent:field:nesting:)`` reads one, at `path` and its index.
    func decodeRequiredReferences<Value: CKDecodable>(
        _ type: Value.Type, _ references: [CloudReference], at path: CodingPath, parent: CloudRecord.ID,
        field: String?, nesting: Int
    ) throws -> [Value] {
        var values: [Value] = []
        values.reserveCapacity(references.count)
        for index in references.indices {
            values.append(
                try decodeRequiredReference(
                    Value.self, reference: references[index], at: path.appending(index: index), parent: parent,
                    field: field, nesting: nesting))
        }
        return values
    }

    /// Where a reference leads: a record in hand, nowhere, or (while probing) a placeholder, the reference noted.
    private enum ReferencedRecord {
        case slot(Int)
        case missing
        case placeholder
    }

    private func locate(
        _ reference: CloudReference, as type: any CKDecodable.Type, at path: CodingPath, field: String?
    ) throws -> ReferencedRecord {
        let slot = session.knownSlot(of: reference.recordID)
        if let slot, session.isMissing(slot) { return .missing }
        if let probe = session.probe {
            probe.children.append((reference.recordID, type, path))
            probe.note(field: field, type: type)
            return .placeholder
        }
        guard let slot, session.recordIndex(of: slot) != nil else {
            guard session.canFetchMore else { return .missing }
            session.noteUnresolved(
                DecodingSession.Node(slot: session.slot(for: reference.recordID), type: type, path: path, depth: 0))
            throw DecodingSession.NeedsMoreRecords()
        }
        return .slot(slot)
    }
}
