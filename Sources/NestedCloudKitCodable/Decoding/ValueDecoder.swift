import Foundation

/// The `Decoder` for any value: a record (the source of a `CKDecodable` value), a field, an element of a list, a
/// value inside embedded JSON, or flattened fields. It is also its own single-value container.
final class ValueDecoder: Decoder, SingleValueDecodingContainer {
    let session: DecodingSession
    let source: DecodingSource
    let path: CodingPath
    /// The index in the session's ``DecodingSession/records`` of the record the value belongs to, for errors and
    /// flattened fields.
    let recordIndex: Int
    /// The record field the value belongs to, for errors.
    let field: String?
    /// How many records are being decoded one inside another at this point.
    let nesting: Int
    /// Where the next field lookup in `record` starts (see `CloudRecord.Fields.value(named:hint:)`). Exclusivity
    /// isn't checked at run time: a decoder is used by one initializer at a time, one field lookup at a time.
    @exclusivity(unchecked) var fieldHint = 0

    init(
        session: DecodingSession, source: DecodingSource, path: CodingPath, record: Int, field: String?,
        nesting: Int = 0
    ) {
        self.session = session
        self.source = source
        self.path = path
        self.recordIndex = record
        self.field = field
        self.nesting = nesting
    }

    /// The record the value belongs to, read in place: a getter would copy the record (a retain and a release of
    /// each of its parts) on every field read.
    var record: CloudRecord { _read { yield session.records[recordIndex] } }
    /// The value of a field of the record, looked up from where the last lookup ended, read in place.
    func fieldValue(named name: String) -> CloudValue? {
        session.records[recordIndex].fields.value(named: name, hint: &fieldHint)
    }

    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { session.userInfo }
    var options: DecodingOptions { session.options }
    var location: DecodingLocation { DecodingLocation(path: path, recordID: record.id, field: field) }
    /// What the source holds, for error messages: a record by its type.
    var sourceDescription: String {
        if case .record = source { return "a \(record.recordType) record" }
        return source.kindDescription
    }

    /// A decoder for a value inside this one.
    func child(_ source: DecodingSource, at path: CodingPath, field: String?) -> ValueDecoder {
        ValueDecoder(session: session, source: source, path: path, record: recordIndex, field: field, nesting: nesting)
    }

    // MARK: Containers

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try throwingDecodingErrors { try keyedContainer(keyedBy: type) }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try throwingDecodingErrors { try listContainer() }
    }

    private func keyedContainer<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let storage: KeyedStorage
        switch source {
        case .record: storage = .record
        case .flattened(_, let prefix): storage = .flattened(prefix: prefix)
        case .json(.object(let object)): storage = .json(object)
        case .value(.string(let text)):
            guard case .object(let object) = try parseJSON(text) else {
                throw CKCodableError.typeMismatch(
                    expected: "a keyed value", found: "JSON that isn't an object", at: location)
            }
            storage = .json(object)
        case .absent: throw missingValue()
        default:
            throw CKCodableError.typeMismatch(expected: "a keyed value", found: sourceDescription, at: location)
        }
        return KeyedDecodingContainer(ValueKeyedContainer<Key>(decoder: self, storage: storage))
    }

    private func listContainer() throws -> any UnkeyedDecodingContainer {
        let elements: ValueUnkeyedContainer.Elements
        switch source {
        case .value(let value) where value.kind.isList:
            elements = .list(value)
        case .json(.array(let array)): elements = .json(array)
        case .value(.string(let text)):
            guard case .array(let array) = try parseJSON(text) else {
                throw CKCodableError.typeMismatch(expected: "a list", found: "JSON that isn't an array", at: location)
            }
            elements = .json(array)
        case .absent:
            // CloudKit can't store an empty list, so a missing list is an empty one.
            elements = .none
        default: throw CKCodableError.typeMismatch(expected: "a list", found: sourceDescription, at: location)
        }
        return ValueUnkeyedContainer(decoder: self, elements: elements)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    private func parseJSON(_ text: String) throws -> EmbeddedJSON {
        do {
            return try EmbeddedJSON.parse(text)
        } catch {
            throw CKCodableError.corruptedValue("the embedded JSON is malformed (\(error))", at: location)
        }
    }

    func missingValue() -> CKCodableError {
        CKCodableError.missingField(path.keys.last?.stringValue ?? field ?? "value", at: location)
    }

    // MARK: Single value

    func decodeNil() -> Bool {
        switch source {
        case .absent, .json(.null): true
        default: false
        }
    }

    func decode(_ type: Bool.Type) throws -> Bool { try throwingDecodingErrors { try unboxBool() } }
    func decode(_ type: String.Type) throws -> String { try throwingDecodingErrors { try unboxString() } }
    func decode(_ type: Double.Type) throws -> Double { try throwingDecodingErrors { try unboxDouble() } }
    func decode(_ type: Float.Type) throws -> Float { try throwingDecodingErrors { try unboxFloat() } }
    func decode(_ type: Int.Type) throws -> Int { try throwingDecodingErrors { try unboxInteger(type) } }
    func decode(_ type: Int8.Type) throws -> Int8 { try throwingDecodingErrors { try unboxInteger(type) } }
    func decode(_ type: Int16.Type) throws -> Int16 { try throwingDecodingErrors { try unboxInteger(type) } }
    func decode(_ type: Int32.Type) throws -> Int32 { try throwingDecodingErrors { try unboxInteger(type) } }
    func decode(_ type: Int64.Type) throws -> Int64 { try throwingDecodingErrors { try unboxInteger(type) } }
    func decode(_ type: UInt.Type) throws -> UInt { try throwingDecodingErrors { try unboxInteger(type) } }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try throwingDecodingErrors { try unboxInteger(type) } }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try throwingDecodingErrors { try unboxInteger(type) } }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try throwingDecodingErrors { try unboxInteger(type) } }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try throwingDecodingErrors { try unboxInteger(type) } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type) throws -> Int128 { try throwingDecodingErrors { try unboxInteger(type) } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type) throws -> UInt128 { try throwingDecodingErrors { try unboxInteger(type) } }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try throwingDecodingErrors { try unbox(type) } }
}
