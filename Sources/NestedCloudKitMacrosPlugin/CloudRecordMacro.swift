import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@CloudRecord`: writes a struct's `CloudRecordMappable` conformance (its `encodeFields(to:)` and
/// `init(fields:)`) from its stored properties, under the field names its `CodingKeys` give them, so that the
/// mapping and the synthesized `Codable` conformance describe the same record.
public struct CloudRecordMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let model = declaration.as(StructDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: MappingDiagnostic.notAStruct))
            return []
        }
        guard let properties = storedProperties(of: model, in: context) else { return [] }
        let access = accessModifier(of: model)
        let encodeLines = properties.map { property in
            let method = property.isOptional ? "encodeIfPresent" : "encode"
            return "try record.\(method)(self.\(property.name), forKey: \(literal(property.field)))"
        }
        let decodeLines = properties.filter(\.isDecoded).map { property in
            let method = property.isOptional ? "decodeIfPresent" : "decode"
            // The type comes from the property: a type it names may not be in scope in an extension.
            return "self.\(property.name) = try record.\(method)(forKey: \(literal(property.field)))"
        }
        let inheritance = protocols.isEmpty ? "" : ": " + protocols.map(\.trimmedDescription).joined(separator: ", ")
        let source: DeclSyntax = """
            extension \(type.trimmed)\(raw: inheritance) {
                \(raw: access)func encodeFields(to record: inout NestedCloudKitCodable.CloudRecordWriter) throws {
                    \(raw: encodeLines.joined(separator: "\n"))
                }

                \(raw: access)init(fields record: NestedCloudKitCodable.CloudRecordReader) throws {
                    \(raw: decodeLines.joined(separator: "\n"))
                }
            }
            """
        guard let mapping = source.as(ExtensionDeclSyntax.self) else { return [] }
        return [mapping]
    }

    /// The stored instance properties in declaration order, with their fields; `nil` after a diagnostic.
    private static func storedProperties(of model: StructDeclSyntax, in context: some MacroExpansionContext)
        -> [StoredProperty]?
    {
        let keys = codingKeys(of: model)
        var properties: [StoredProperty] = []
        var isValid = true
        for member in model.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self),
                !variable.modifiers.contains(where: { ["static", "class", "lazy"].contains($0.name.text) })
            else { continue }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            let bindings = Array(variable.bindings)
            for (index, binding) in bindings.enumerated() {
                guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
                if let accessors = binding.accessorBlock, isComputed(accessors) { continue }
                let name = pattern.identifier.trimmedDescription
                // `var a, b: Int` gives both the type written after the last of them.
                guard
                    let type = bindings[index...].lazy.compactMap({ $0.typeAnnotation?.type }).first
                else {
                    context.diagnose(
                        Diagnostic(node: binding, message: MappingDiagnostic.missingTypeAnnotation(name)))
                    isValid = false
                    continue
                }
                let field: String
                if let keys {
                    // As in synthesized Codable, a property without a coding key isn't stored.
                    guard let key = keys[name] else { continue }
                    field = key
                } else {
                    field = name.trimmingBackticks
                }
                properties.append(
                    StoredProperty(
                        name: name, type: type.trimmed, field: field, isOptional: StoredProperty.isOptional(type),
                        isDecoded: !(isLet && binding.initializer != nil)))
            }
        }
        return isValid ? properties : nil
    }

    /// Whether an accessor block makes a computed property (a getter), rather than observers of a stored one.
    private static func isComputed(_ accessors: AccessorBlockSyntax) -> Bool {
        switch accessors.accessors {
        case .getter: return true
        case .accessors(let list):
            return list.contains { ["get", "_read", "unsafeAddress"].contains($0.accessorSpecifier.text) }
        }
    }

    /// The field name of each property the model's `CodingKeys` lists: its raw value, or its name.
    private static func codingKeys(of model: StructDeclSyntax) -> [String: String]? {
        for member in model.memberBlock.members {
            guard let keys = member.decl.as(EnumDeclSyntax.self), keys.name.text == "CodingKeys" else { continue }
            var fields: [String: String] = [:]
            for caseMember in keys.memberBlock.members {
                guard let cases = caseMember.decl.as(EnumCaseDeclSyntax.self) else { continue }
                for element in cases.elements {
                    let name = element.name.trimmedDescription
                    if let raw = element.rawValue?.value.as(StringLiteralExprSyntax.self),
                        let text = raw.representedLiteralValue
                    {
                        fields[name] = text
                    } else {
                        fields[name] = name.trimmingBackticks
                    }
                }
            }
            return fields
        }
        return nil
    }

    /// `public` or `package` for a model of that access, so that the members can satisfy its conformance.
    private static func accessModifier(of model: StructDeclSyntax) -> String {
        for modifier in model.modifiers {
            switch modifier.name.text {
            case "public", "open": return "public "
            case "package": return "package "
            default: continue
            }
        }
        return ""
    }

    /// A string literal of the text, its backslashes and quotes escaped (a raw value can hold either).
    private static func literal(_ text: String) -> String {
        var escaped = "\""
        for character in text {
            if character == "\\" || character == "\"" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped + "\""
    }
}

extension String {
    /// The name without the backticks that let a keyword name a property.
    fileprivate var trimmingBackticks: String {
        hasPrefix("`") && hasSuffix("`") && count > 1 ? String(dropFirst().dropLast()) : self
    }
}
