import SwiftDiagnostics
import SwiftSyntax

/// What a stored property's `@CloudField` and `@CloudIgnored` attributes say about its field.
struct FieldAttributes {
    /// The field's name, when `@CloudField(name:)` renames it.
    var name: String?
    /// The reference action's expression as written (`.deleteSelf`), for the options' dictionary.
    var referenceAction: String?
    var isAsset = false
    /// The `asset: true` argument, where a diagnostic about a property that can't be an asset points.
    var assetArgument: LabeledExprSyntax?
    var isEncrypted = false
    /// Whether the property references the record's parent for sharing.
    var isParent = false
    /// The attribute that makes the property the parent, where a diagnostic about a second parent points.
    var parentAttribute: AttributeSyntax?
    var isIgnored = false
    /// The attribute that renames the field, or leaves it out, where a diagnostic about `CodingKeys` points.
    var keyAttribute: AttributeSyntax?

    /// Whether the attributes set any of the type's field options. Leaving a property out isn't one: the
    /// `CodingKeys` the macro writes leave it out, as Codable users do.
    var setsOptions: Bool { referenceAction != nil || isAsset || isEncrypted || isParent }

    /// The attribute names this package's property macros answer to; never taken for property wrappers.
    static let names: Set<String> = ["CloudField", "CloudIgnored"]

    /// Reads a property's attributes. An argument the macro can't read (a name or a flag that isn't a literal) is
    /// left out, and given to `report` where it was written: `@CloudField` reports for itself, and `@CloudRecord`
    /// reads the same attributes silently.
    static func read(_ attributes: AttributeListSyntax, report: ((Diagnostic) -> Void)?) -> FieldAttributes {
        var result = FieldAttributes()
        for element in attributes {
            guard case .attribute(let attribute) = element else { continue }
            result.read(attribute, report: report)
        }
        return result
    }

    /// Adds what one attribute says; any other attribute says nothing.
    mutating func read(_ attribute: AttributeSyntax, report: ((Diagnostic) -> Void)?) {
        switch Self.attributeName(attribute) {
        case "CloudIgnored":
            isIgnored = true
            keyAttribute = attribute
        case "CloudField":
            guard case .argumentList(let arguments)? = attribute.arguments else { return }
            for argument in arguments {
                switch argument.label?.text {
                case "name":
                    if let text = argument.expression.as(StringLiteralExprSyntax.self)?.representedLiteralValue {
                        name = text
                        keyAttribute = attribute
                    } else {
                        report?(Diagnostic(node: argument.expression, message: MappingDiagnostic.nameNotLiteral))
                    }
                case "reference":
                    if !argument.expression.is(NilLiteralExprSyntax.self) {
                        referenceAction = argument.expression.trimmedDescription
                    }
                case "asset":
                    isAsset = Self.flag(argument, report: report)
                    if isAsset { assetArgument = argument }
                case "encrypted":
                    isEncrypted = Self.flag(argument, report: report)
                case "parent":
                    isParent = Self.flag(argument, report: report)
                    if isParent { parentAttribute = attribute }
                default:
                    continue
                }
            }
        default:
            return
        }
    }

    /// The attribute's name, with or without its module (`NestedCloudKitMacros.CloudField`).
    static func attributeName(_ attribute: AttributeSyntax) -> String? {
        attribute.attributeName.as(IdentifierTypeSyntax.self)?.name.text
            ?? attribute.attributeName.as(MemberTypeSyntax.self)?.name.text
    }

    private static func flag(_ argument: LabeledExprSyntax, report: ((Diagnostic) -> Void)?) -> Bool {
        guard let literal = argument.expression.as(BooleanLiteralExprSyntax.self) else {
            report?(Diagnostic(node: argument.expression, message: MappingDiagnostic.flagNotLiteral))
            return false
        }
        return literal.literal.tokenKind == .keyword(.true)
    }
}
