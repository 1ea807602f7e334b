import Foundation

/// What the encoder needs of a model type: its declared options (and the field options of a value that adds none
/// through version 1.0's instance methods), and its record mapping if it has one (used instead of `Encodable`).
///
/// Read once per type and process: the options are a static property, and the mapping a conformance, which don't
/// change while a program runs. Finding them again for each encode (a dynamic cast, and the options built again)
/// cost a twelfth of encoding a flat record.
///
/// A class, immutable: an encode hands it from record to record with one retain, where copying the options would
/// retain each of their sets.
final class EncodedModelType: @unchecked Sendable {
    // Unchecked: a metatype is immutable, and the options are Sendable values.
    let options: CloudFieldOptions
    let fieldOptions: RecordFieldOptions
    let mapping: (any CloudRecordEncodable.Type)?

    init(_ type: any CKEncodable.Type) {
        options = type.cloudKitFieldOptions
        fieldOptions = RecordFieldOptions(declared: options, schemaVersion: type.cloudKitSchemaVersion)
        mapping = type as? any CloudRecordEncodable.Type
    }
}
