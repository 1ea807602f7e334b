/// Collections of records, whose element type the decoder learns while probing a model, even from a record
/// whose list is empty.
protocol RecordCollection {
    static var elementRecordType: any CKDecodable.Type { get }
}

extension Array: RecordCollection where Element: CKDecodable {
    static var elementRecordType: any CKDecodable.Type { Element.self }
}

extension Set: RecordCollection where Element: CKDecodable {
    static var elementRecordType: any CKDecodable.Type { Element.self }
}

extension Optional: RecordCollection where Wrapped: RecordCollection {
    static var elementRecordType: any CKDecodable.Type { Wrapped.elementRecordType }
}
