import Foundation

/// Where a keyed container's values are. Record fields are read from the decoder's `record`, so copying a
/// container doesn't copy the record.
enum KeyedStorage {
    /// The decoder's record's fields.
    case record
    /// The fields of the decoder's record whose names start with the prefix.
    case flattened(prefix: String)
    /// A JSON object.
    case json([String: EmbeddedJSON])
}

/// A keyed container over a record's fields, flattened fields or a JSON object.
struct ValueKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ValueDecoder
    let storage: KeyedStorage

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        let record = decoder.record
        switch storage {
        case .record:
            var names = record.fields.names
            if case .flattened(let separator) = decoder.options.nestedValueDecodingStrategy {
                names += flattenedNames(in: record, prefix: "", separator: separator)
            }
            return uniqueKeys(names)
        case .flattened(let prefix):
            guard case .flattened(let separator) = decoder.options.nestedValueDecodingStrategy else { return [] }
            return uniqueKeys(flattenedNames(in: record, prefix: prefix, separator: separator))
        case .json(let object):
            return object.keys.sorted().compactMap { Key(stringValue: $0) }
        }
    }

    /// The names one level below `prefix`: `address` for the fields `address_city` and `address_zip`.
    private func flattenedNames(in record: CloudRecord, prefix: String, separator: String) -> [String] {
        record.fields.names.compactMap { name in
            guard name.hasPrefix(prefix), name.count > prefix.count else { return nil }
            let rest = name.dropFirst(prefix.count)
            guard let end = rest.range(of: separator)?.lowerBound else { return String(rest) }
            return String(rest[..<end])
        }
    }

    private func uniqueKeys(_ names: [String]) -> [Key] {
        var seen: Set<String> = []
        return names.filter { seen.insert($0).inserted }.compactMap { Key(stringValue: $0) }
    }

    /// Where the value of a key is.
    func source(for key: some CodingKey) -> DecodingSource {
        switch storage {
        case .record:
            let name = key.stringValue
            return fieldSource(named: name) ?? (name == "id" ? .recordName(decoder.record.id.recordName) : .absent)
        case .flattened(let prefix):
            return fieldSource(named: prefix + key.stringValue) ?? .absent
        case .json(let object):
            return object[key.stringValue].map(DecodingSource.json) ?? .absent
        }
    }

    private func fieldSource(named name: String) -> DecodingSource? {
        if let value = decoder.fieldValue(named: name) { return .value(value) }
        if case .flattened(let separator) = decoder.options.nestedValueDecodingStrategy {
            let prefix = name + separator
            if decoder.record.fields.contains(where: { $0.name.hasPrefix(prefix) }) {
                return .flattened(decoder.record, prefix: prefix)
            }
        }
        return nil
    }

    /// Reads a value of a common type straight from the source, with no child decoder; only a failure builds one,
    /// for its error.
    private func read<T>(_ key: Key, _ fast: (DecodingSource) -> T?, _ slow: (ValueDecoder) throws -> T) throws -> T {
        let source = source(for: key)
        if let value = fast(source) { return value }
        return try throwingDecodingErrors { try slow(childDecoder(for: key, source: source)) }
    }

    private func childDecoder(for key: some CodingKey, source: DecodingSource? = nil) -> ValueDecoder {
        let field: String? =
            switch storage {
            case .record: key.stringValue
            case .flattened(let prefix): prefix + key.stringValue
            case .json: decoder.field
            }
        return decoder.child(source ?? self.source(for: key), at: decoder.path.appending(key), field: field)
    }

    func contains(_ key: Key) -> Bool {
        if case .absent = source(for: key) { return false }
        return true
    }

    func decodeNil(forKey key: Key) throws -> Bool { childDecoder(for: key).decodeNil() }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try read(key, Unboxing.bool) { try $0.unboxBool() }
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try read(key, Unboxing.string) { try $0.unboxString() }
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try read(key, Unboxing.double) { try $0.unboxDouble() }
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try throwingDecodingErrors { try childDecoder(for: key).unboxFloat() }
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try read(key, Unboxing.integer) { try $0.unboxInteger(type) }
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try read(key, Unboxing.integer) { try $0.unboxInteger(type) }
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try read(key, Unboxing.integer) { try $0.unboxInteger(type) }
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try read(key, Unboxing.integer) { try $0.unboxInteger(type) }
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try read(key, Unboxing.integer) { try $0.unboxInteger(type) }
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try read(key, Unboxing.integer) { try $0.unboxInteger(type) }
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try read(key, Unboxing.integer) { try $0.unboxInteger(type) }
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try read(key, Unboxing.integer) { try $0.unboxInteger(type) }
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try read(key, Unboxing.integer) { try $0.unboxInteger(type) }
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try read(key, Unboxing.integer) { try $0.unboxInteger(type) }
    }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 {
        try read(key, Unboxing.integer) { try $0.unboxInteger(type) }
    }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 {
        try read(key, Unboxing.integer) { try $0.unboxInteger(type) }
    }

    /// While probing, notes a field the model decodes as records (or a collection of them), present or not, so the
    /// type's schema covers fields that the probed record happens to lack.
    private func noteRecordField<T>(_ type: T.Type, forKey key: Key) {
        guard let probe = decoder.session.probe, case .record = storage else { return }
        if let recordType = T.self as? any CKDecodable.Type {
            probe.note(field: key.stringValue, type: recordType)
        } else if let collection = T.self as? any RecordCollection.Type {
            probe.note(field: key.stringValue, type: collection.elementRecordType)
        }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try throwingDecodingErrors { try decodeValue(type, forKey: key) }
    }

    private func decodeValue<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        noteRecordField(type, forKey: key)
        if let systemFields = try systemFields(as: type, forKey: key) {
            guard let value = systemFields else {
                throw CKCodableError.missingField(key.stringValue, at: childDecoder(for: key).location)
            }
            return try decoder.cast(value, to: T.self)
        }
        let source = source(for: key)
        if let value: T = Unboxing.known(source) { return value }
        return try childDecoder(for: key, source: source).unbox(type)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }

    // The standard library's defaults for these look the key up three times (`contains`, `decodeNil`, `decode`);
    // synthesized `init(from:)` calls them for every optional property.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        try throwingDecodingErrors { try decodeValueIfPresent(type, forKey: key) }
    }

    private func decodeValueIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        noteRecordField(type, forKey: key)
        if let systemFields = try systemFields(as: type, forKey: key) {
            return try systemFields.map { try decoder.cast($0, to: T.self) }
        }
        let source = source(for: key)
        switch source {
        case .absent, .json(.null): return nil
        default: break
        }
        if let value: T = Unboxing.known(source) { return value }
        return try childDecoder(for: key, source: source).unboxIfPresent(type)
    }

    /// For a property of type `CloudRecord.SystemFields`, the record's system fields (`.some(nil)` if it has
    /// none); `nil` for any other property.
    private func systemFields<T>(as type: T.Type, forKey key: Key) throws -> CloudRecord.SystemFields?? {
        guard T.self == CloudRecord.SystemFields.self || T.self == CloudRecord.SystemFields?.self,
            case .record = storage
        else { return nil }
        return .some(decoder.record.systemFields)
    }

    // MARK: Records, for mapped models

    /// The record a reference field holds, decoded as a model: what ``decode(_:forKey:)`` gives for a model type,
    /// without a decoder for the field or a dynamic cast to find that the type is a model. `nil` for a missing
    /// record when `ifPresent` and the strategy allow it. Any field that isn't a reference takes the general path,
    /// which decodes it or says what is wrong exactly as for a `Codable` model.
    func decodeRecord<T: CKDecodable>(_ type: T.Type, forKey key: Key, ifPresent: Bool) throws -> T? {
        if let probe = decoder.session.probe, case .record = storage {
            probe.note(field: key.stringValue, type: T.self)
        }
        let source = source(for: key)
        guard case .value(.reference(let reference)) = source else {
            return ifPresent ? try decodeIfPresent(type, forKey: key) : try decode(type, forKey: key)
        }
        let field = key.stringValue
        let path = decoder.path.appending(key)
        return try throwingDecodingErrors {
            guard
                let value = try decoder.session.decodeReferenced(
                    T.self, reference: reference, at: path, field: field, nesting: decoder.nesting)
            else {
                if ifPresent, decoder.options.missingReferenceStrategy == .nilForOptionals { return nil }
                throw CKCodableError.missingRecord(
                    reference.recordID, at: DecodingLocation(path: path, recordID: decoder.record.id, field: field))
            }
            return value
        }
    }

    /// The records a reference list field holds, decoded as models, in order; an empty array for a missing field
    /// (CloudKit can't store an empty list). As ``decodeRecord(_:forKey:ifPresent:)``, any other field takes the
    /// general path.
    func decodeRecords<T: CKDecodable>(_ type: T.Type, forKey key: Key) throws -> [T] {
        if let probe = decoder.session.probe, case .record = storage {
            probe.note(field: key.stringValue, type: T.self)
        }
        let source = source(for: key)
        let references: [CloudReference]
        switch source {
        case .value(.referenceList(let list)): references = list
        case .absent: return []
        default: return try decode([T].self, forKey: key)
        }
        let field = key.stringValue
        let fieldPath = decoder.path.appending(key)
        return try throwingDecodingErrors {
            try decoder.session.decodeRequiredReferences(
                T.self, references, at: fieldPath, parent: decoder.record.id, field: field, nesting: decoder.nesting)
        }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try throwingDecodingErrors { try childDecoder(for: key).container(keyedBy: type) }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try throwingDecodingErrors { try childDecoder(for: key).unkeyedContainer() }
    }

    func superDecoder() throws -> any Decoder { childDecoder(for: NamedKey.super) }
    func superDecoder(forKey key: Key) throws -> any Decoder { childDecoder(for: key) }
}
