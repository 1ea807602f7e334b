import Foundation

/// What the last record of a model type wrote: the keys its value wrote, in order and none twice, and its field
/// names, in order and each valid. The next record of the type that writes the same keys, or the same names at the
/// same positions, needn't check them again; anything else is checked as the first was.
///
/// Names only, never values: templates outlive the encode that made them (see ``EncodedModelTypes``).
struct RecordTemplate: Sendable {
    var keys: [String] = []
    var fieldNames: [String] = []
}

/// What the encoder knows of every model type encoded in this process: its declared options and record mapping,
/// read once, and its template, so that values encoded one call at a time (a save of one model, a list saved model
/// by model) are checked against the last one of their type too, not only the records of one graph. One entry per
/// model type, found with one lock whichever of the two an encode needs; a type's template changes only when a
/// record of it writes other keys or names than the last.
final class EncodedModelTypes: Sendable {
    static let shared = EncodedModelTypes()

    struct Entry: Sendable {
        var type: EncodedModelType?
        var template: RecordTemplate?
    }

    private let entries = Locked<[ObjectIdentifier: Entry]>([:])

    /// What is known of a model type; empty before a value of it has been encoded.
    func entry(for type: ObjectIdentifier) -> Entry {
        entries.withLock { $0[type] } ?? Entry()
    }

    /// Makes a template the type's.
    func set(_ template: RecordTemplate, for type: ObjectIdentifier) {
        entries.withLock { $0[type, default: Entry()].template = template }
    }

    /// Records what a model type declares.
    func set(_ modelType: EncodedModelType, for type: ObjectIdentifier) {
        entries.withLock { $0[type, default: Entry()].type = modelType }
    }
}

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
        fieldOptions = RecordFieldOptions(declared: options)
        mapping = type as? any CloudRecordEncodable.Type
    }
}
