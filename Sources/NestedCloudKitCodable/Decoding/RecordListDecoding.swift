import Foundation

/// An array that can be read straight from a reference list field, each element as the record it references.
///
/// A `Codable` model's `[Child]` property would otherwise decode through `Array.init(from:)`: the standard
/// library's unspecialized loop, an unkeyed container, a boxed optional and a dynamic cast per element. Reading it
/// here decodes each child as its own type, as a mapped model's list does, with the same errors at the same paths.
protocol RecordListDecoding {
    /// The elements of `references`, in order; `nil` when the element type isn't a model (an optional element, a
    /// nested array): that takes the general path, which decodes it or says exactly what is wrong.
    static func decodeRecords(_ references: [CloudReference], with decoder: ValueDecoder) throws -> Self?
}

extension Array: RecordListDecoding where Element: Decodable {
    static func decodeRecords(_ references: [CloudReference], with decoder: ValueDecoder) throws -> [Element]? {
        guard let model = Element.self as? any CKDecodable.Type else { return nil }
        return try decodeRecords(as: model, references, with: decoder)
    }

    private static func decodeRecords<Model: CKDecodable>(
        as model: Model.Type, _ references: [CloudReference], with decoder: ValueDecoder
    ) throws -> [Element]? {
        // `Model` is `Element`, opened from the cast above; checked, so the array's bits can be reused as is.
        guard Model.self == Element.self else { return nil }
        let values = try decoder.session.decodeRequiredReferences(
            Model.self, references, at: decoder.path, parent: decoder.record.id, field: decoder.field,
            nesting: decoder.nesting)
        return unsafeBitCast(values, to: [Element].self)
    }
}
