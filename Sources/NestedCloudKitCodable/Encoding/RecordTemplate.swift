import Foundation

/// What the last record of a model type wrote: the keys its value wrote, in order and none twice, and its field
/// names, in order and each valid. The next record of the type that writes the same keys, or the same names at the
/// same positions, needn't check them again; anything else is checked as the first was.
///
/// Names only, never values: templates outlive the encode that made them (see ``RecordTemplates``).
struct RecordTemplate: Sendable {
    var keys: [String] = []
    var fieldNames: [String] = []
}

/// The template of every model type encoded in this process, so that values encoded one call at a time (a save
/// of one model, a list saved model by model) are checked against the last one of their type too, not only the
/// records of one graph. One entry per model type; a type's entry changes only when a record of it writes other
/// keys or names than the last.
final class RecordTemplates: Sendable {
    static let shared = RecordTemplates()

    private let templates = Locked<[ObjectIdentifier: RecordTemplate]>([:])

    /// The template of a model type, or `nil` before a record of the type has been encoded.
    func template(for type: ObjectIdentifier) -> RecordTemplate? {
        templates.withLock { $0[type] }
    }

    /// Makes a template the type's.
    func set(_ template: RecordTemplate, for type: ObjectIdentifier) {
        templates.withLock { $0[type] = template }
    }
}
