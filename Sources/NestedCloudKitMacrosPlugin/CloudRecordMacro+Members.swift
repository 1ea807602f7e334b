import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// The members `@CloudRecord` adds from its properties' attributes, so that the Codable path reads them too:
/// `CodingKeys` when `@CloudField(name:)` renames a field or `@CloudIgnored` leaves one out, and
/// `cloudKitFieldOptions` when `@CloudField` sets options. Both coders follow those members, so a model's records
/// are the same whichever path it takes.
extension CloudRecordMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        // The extension expansion says why it maps nothing for these.
        guard let model = declaration.as(StructDeclSyntax.self), !hasOwnCodable(model) else { return [] }
        let properties = declaredProperties(of: model)
        let access = accessModifier(of: model)
        var members: [DeclSyntax] = []

        // `CodingKeys` say which properties are stored, and under which names: the type's own, or the macro's.
        let keyed = properties.filter { $0.attributes.name != nil || $0.attributes.isIgnored }
        if !keyed.isEmpty {
            if codingKeys(of: model) != nil {
                for property in keyed {
                    guard let attribute = property.attributes.keyAttribute else { continue }
                    let message: MappingDiagnostic =
                        property.attributes.isIgnored ? .ignoreWithCodingKeys : .renameWithCodingKeys
                    context.diagnose(Diagnostic(node: attribute, message: message))
                }
            } else {
                members.append(codingKeysDeclaration(properties))
            }
        }

        for extra in properties.filter(\.attributes.isParent).dropFirst() {
            guard let attribute = extra.attributes.parentAttribute else { continue }
            context.diagnose(Diagnostic(node: attribute, message: MappingDiagnostic.secondParent))
        }
        let withOptions = properties.filter(\.attributes.setsOptions)
        if !withOptions.isEmpty {
            if declaresFieldOptions(model) {
                context.diagnose(Diagnostic(node: node, message: MappingDiagnostic.optionsTwice))
            } else {
                members.append(fieldOptionsDeclaration(properties, access: access))
            }
        }
        return members
    }

    /// `CodingKeys` as Codable synthesis would write them, with the names `@CloudField(name:)` gives, and without
    /// the properties `@CloudIgnored` leaves out (so Codable leaves them out too, keeping their initial values).
    private static func codingKeysDeclaration(_ properties: [StoredProperty]) -> DeclSyntax {
        let cases = properties.filter { !$0.attributes.isIgnored }.map { property in
            let field = property.attributes.name ?? property.name
            return field == property.name
                ? "case \(property.identifier)" : "case \(property.identifier) = \(literal(field))"
        }
        return """
            enum CodingKeys: String, CodingKey {
                \(raw: cases.joined(separator: "\n"))
            }
            """
    }

    /// `cloudKitFieldOptions` keyed by the coding keys, so the compiler checks every name. Computed: a generic
    /// struct can't hold a static stored property, and the coders read it once per type and encode.
    private static func fieldOptionsDeclaration(_ properties: [StoredProperty], access: String) -> DeclSyntax {
        // An ignored property has no coding key to name, and no field for options to apply to.
        let properties = properties.filter { !$0.attributes.isIgnored }
        let actions = properties.compactMap { property in
            property.attributes.referenceAction.map { "\(property.key): \($0)" }
        }
        let assets = properties.filter(\.attributes.isAsset).map(\.key)
        let encrypted = properties.filter(\.attributes.isEncrypted).map(\.key)
        var arguments = ["keyedBy: CodingKeys.self"]
        if !actions.isEmpty { arguments.append("referenceActions: [\(actions.joined(separator: ", "))]") }
        if !assets.isEmpty { arguments.append("assets: [\(assets.joined(separator: ", "))]") }
        if !encrypted.isEmpty { arguments.append("encrypted: [\(encrypted.joined(separator: ", "))]") }
        // One parent: a second one is diagnosed, and the first kept.
        if let parent = properties.first(where: \.attributes.isParent) { arguments.append("parent: \(parent.key)") }
        return """
            \(raw: access)static var cloudKitFieldOptions: NestedCloudKitCodable.CloudFieldOptions {
                NestedCloudKitCodable.CloudFieldOptions(\(raw: arguments.joined(separator: ", ")))
            }
            """
    }

    /// Whether the type declares `cloudKitFieldOptions` itself.
    private static func declaresFieldOptions(_ model: StructDeclSyntax) -> Bool {
        model.memberBlock.members.contains { member in
            member.decl.as(VariableDeclSyntax.self)?.bindings.contains {
                $0.pattern.as(IdentifierPatternSyntax.self)?.identifier.text == "cloudKitFieldOptions"
            } == true
        }
    }
}
