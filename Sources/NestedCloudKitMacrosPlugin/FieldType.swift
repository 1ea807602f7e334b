import SwiftSyntax

/// What a property's written type tells the macro about the field options it can take. Only types the macro knows
/// for sure are judged: any other name may be a model, or an alias of `Data`, and is left to the coders, which
/// refuse a wrong one when they encode (``CKCodableError``'s `invalidAssetField` and `invalidParentField`).
struct FieldType {
    /// The type as written, for messages.
    let written: String
    /// The element type of a list (`[T]`, `Array<T>`, `Set<T>`, `ContiguousArray<T>`), if the type is one.
    private let element: String?
    /// The type's name without an optional around it, its module, or its generic arguments.
    private let name: String?
    /// Whether it is a dictionary, which the coders store as embedded JSON.
    private let isDictionary: Bool

    init(_ type: TypeSyntax) {
        written = type.trimmedDescription
        let unwrapped = Self.unwrappingOptional(type)
        if let array = unwrapped.as(ArrayTypeSyntax.self) {
            element = Self.name(of: Self.unwrappingOptional(array.element))
            name = nil
            isDictionary = false
        } else if unwrapped.is(DictionaryTypeSyntax.self) {
            (element, name, isDictionary) = (nil, nil, true)
        } else if let named = Self.name(of: unwrapped),
            ["Array", "Set", "ContiguousArray"].contains(named),
            let argument = Self.genericArguments(of: unwrapped)?.first
        {
            element = Self.name(of: argument)
            name = nil
            isDictionary = false
        } else {
            element = nil
            name = Self.name(of: unwrapped)
            isDictionary = name == "Dictionary"
        }
    }

    /// Types the coders can store as an asset: `Data`, `URL` (a file's), ``CloudAsset``.
    private static let assets: Set<String> = ["Data", "URL", "CloudAsset"]
    /// Types the coders store as values, never a reference or an asset.
    private static let values: Set<String> = [
        "String", "Substring", "Character", "Bool", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8",
        "UInt16", "UInt32", "UInt64", "Double", "Float", "Float16", "Decimal", "Date", "UUID", "CloudLocation",
        "CLLocation",
    ]
    /// Types that hold a reference to another record.
    private static let references: Set<String> = ["CloudReference", "CloudLazyReference"]

    /// Whether `@CloudField(asset: true)` can apply: not a type the macro knows is stored another way.
    var canBeAsset: Bool {
        if isDictionary { return false }
        guard let known = element ?? name else { return true }
        return !Self.values.contains(known) && !Self.references.contains(known)
    }

    /// Whether `@CloudField(parent: true)` can apply: one record, so not a list, and not a type the macro knows
    /// holds no reference.
    var canReferenceParent: Bool {
        if isDictionary || element != nil { return false }
        guard let name else { return true }
        return !Self.values.contains(name) && !Self.assets.contains(name)
    }

    private static func unwrappingOptional(_ type: TypeSyntax) -> TypeSyntax {
        if let optional = type.as(OptionalTypeSyntax.self) { return unwrappingOptional(optional.wrappedType) }
        if let implicit = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            return unwrappingOptional(implicit.wrappedType)
        }
        if name(of: type) == "Optional", let argument = genericArguments(of: type)?.first {
            return unwrappingOptional(argument)
        }
        return type
    }

    /// The last component of a named type (`Foundation.Data` is `Data`), without generic arguments.
    private static func name(of type: TypeSyntax) -> String? {
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.text }
        if let member = type.as(MemberTypeSyntax.self) { return member.name.text }
        return nil
    }

    private static func genericArguments(of type: TypeSyntax) -> [TypeSyntax]? {
        let clause =
            type.as(IdentifierTypeSyntax.self)?.genericArgumentClause
            ?? type.as(MemberTypeSyntax.self)?.genericArgumentClause
        return clause?.arguments.compactMap { $0.argument.as(TypeSyntax.self) }
    }
}
