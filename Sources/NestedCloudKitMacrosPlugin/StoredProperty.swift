import SwiftSyntax

/// A stored property of a model, as the mapping reads and writes it.
struct StoredProperty {
    /// The property's name.
    let name: String
    /// The property's declared type, as written.
    let type: TypeSyntax
    /// The field the property is stored in: its coding key's string value.
    let field: String
    /// Whether the property is an optional, read and written with `decodeIfPresent` and `encodeIfPresent`.
    let isOptional: Bool
    /// Whether the initializer must assign it: a `let` with an initial value is encoded but, as in a synthesized
    /// `init(from:)`, never decoded.
    let isDecoded: Bool

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
