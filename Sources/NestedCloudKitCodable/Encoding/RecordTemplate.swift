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
