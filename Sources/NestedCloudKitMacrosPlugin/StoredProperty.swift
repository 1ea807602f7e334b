import SwiftSyntax

/// A stored property of a model, as the mapping reads and writes it.
struct StoredProperty {
    /// The property's name, without backticks: what its coding key is matched against.
    let name: String
    /// The property's name as written, with the backticks a keyword needs (`` `default` ``).
    let identifier: String
    /// What the generated code reads and assigns: the property, or the wrapper's storage (`_name`) of a wrapped one,
    /// which is what synthesized Codable codes.
    let storage: String
    /// The field the property is stored in: its coding key's string value.
    var field: String
    /// Whether the property is an optional, read and written with `decodeIfPresent` and `encodeIfPresent`.
    let isOptional: Bool
    /// Whether the initializer must assign it: a `let` with an initial value is encoded but, as in a synthesized
    /// `init(from:)`, never decoded.
    let isDecoded: Bool
    /// The initial value of a `var` as written (`false`, `[]`), which a record without the field decodes as: a
    /// property added to a model in a later version reads records written before it.
    var initialValue: String? = nil
    /// What its `@CloudField` and `@CloudIgnored` attributes say.
    var attributes = FieldAttributes()

    func withField(_ field: String) -> StoredProperty {
        var property = self
        property.field = field
        return property
    }

    /// The property's coding key as a member of `CodingKeys` (`.title`, or `` .`default` `` for a keyword).
    var key: String { "." + identifier }

    /// Whether a written type is an optional: `T?`, `T!`, `Optional<T>` or `Swift.Optional<T>`. An optional behind a
    /// type alias isn't seen, and is coded as the `Codable` path codes a non-optional property of that type.
    static func isOptional(_ type: TypeSyntax) -> Bool {
        if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
        if let named = type.as(IdentifierTypeSyntax.self) {
            return named.name.text == "Optional" && named.genericArgumentClause?.arguments.count == 1
        }
        if let member = type.as(MemberTypeSyntax.self) {
            return member.name.text == "Optional" && member.baseType.trimmedDescription == "Swift"
        }
        return false
    }
}
