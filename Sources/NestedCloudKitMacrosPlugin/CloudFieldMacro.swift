import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@CloudField` and `@CloudIgnored`: markers that `@CloudRecord` reads; on their own they add nothing. They check
/// only where they are written: on a stored instance property, since nothing else is stored in a record.
public struct CloudFieldMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let attribute = FieldAttributes.attributeName(node) ?? "CloudField"
        guard let variable = declaration.as(VariableDeclSyntax.self), isStored(variable) else {
            context.diagnose(Diagnostic(node: node, message: MappingDiagnostic.notAStoredProperty(attribute)))
            return []
        }
        // Read for its diagnostics: a name or flag that isn't a literal, an option the property's type can't take.
        var attributes = FieldAttributes()
        attributes.read(node) { context.diagnose($0) }
        guard let type = variable.bindings.lazy.compactMap(\.typeAnnotation?.type).last.map(FieldType.init) else {
            return []
        }
        if let argument = attributes.assetArgument, !type.canBeAsset {
            context.diagnose(Diagnostic(node: argument, message: MappingDiagnostic.assetOfType(type.written)))
        }
        if attributes.isParent, !type.canReferenceParent, let attribute = attributes.parentAttribute {
            context.diagnose(Diagnostic(node: attribute, message: MappingDiagnostic.parentOfType(type.written)))
        }
        return []
    }

    /// Whether the declaration is of stored instance properties the mapping codes: not static, lazy or computed.
    private static func isStored(_ variable: VariableDeclSyntax) -> Bool {
        !variable.modifiers.contains { ["static", "class", "lazy"].contains($0.name.text) }
            && !variable.bindings.contains { $0.accessorBlock.map(CloudRecordMacro.isComputed) == true }
    }
}
