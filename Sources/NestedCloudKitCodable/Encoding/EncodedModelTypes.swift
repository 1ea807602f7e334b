import Foundation

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
