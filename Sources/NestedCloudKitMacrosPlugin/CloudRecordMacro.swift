import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@CloudRecord`: writes a struct's `CloudRecordMappable` and `CloudRecordRowDecodable` conformances (its
/// `encodeFields(to:)`, `init(fields:)` and `init(row:)`) from its stored properties, under the field names its
/// `CodingKeys` give them, so that the mapping and the synthesized `Codable` conformance describe the same record.
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
        guard !hasOwnCodable(model) else {
            context.diagnose(Diagnostic(node: node, message: MappingDiagnostic.ownCodable))
            return []
        }
        let properties = storedProperties(of: model)
        let access = accessModifier(of: model)
        let encodeLines = properties.map { property in
            let method = property.isOptional ? "encodeIfPresent" : "encode"
            return "try record.\(method)(self.\(property.storage), forKey: \(literal(property.field)))"
        }
        // The same reads from a record and from a row of the store's table, so both give the same value.
        func decodeLines(from source: String) -> [String] {
            properties.filter(\.isDecoded).map { property in
                let field = literal(property.field)
                // The type comes from the property: a type it names may not be in scope in an extension.
                if property.isOptional {
                    return "self.\(property.storage) = try \(source).decodeIfPresent(forKey: \(field))"
                }
                // A record written before the property existed lacks its field: it takes the initial value.
                if let initial = property.initialValue {
                    return "self.\(property.storage) = try \(source).decodeIfPresent(forKey: \(field)) ?? (\(initial))"
                }
                return "self.\(property.storage) = try \(source).decode(forKey: \(field))"
            }
        }
        let inheritance = protocols.isEmpty ? "" : ": " + protocols.map(\.trimmedDescription).joined(separator: ", ")
        let source: DeclSyntax = """
            extension \(type.trimmed)\(raw: inheritance) {
                \(raw: access)func encodeFields(to record: inout NestedCloudKitCodable.CloudRecordWriter) throws {
                    \(raw: encodeLines.joined(separator: "\n"))
                }

                \(raw: access)init(fields record: NestedCloudKitCodable.CloudRecordReader) throws {
                    \(raw: decodeLines(from: "record").joined(separator: "\n"))
                }

                \(raw: access)init(row: NestedCloudKitCodable.CloudRecordRow) throws {
                    \(raw: decodeLines(from: "row").joined(separator: "\n"))
                }
            }
            """
        guard let mapping = source.as(ExtensionDeclSyntax.self) else { return [] }
        return [mapping]
    }

    /// The stored instance properties with their fields, in the order Codable synthesis writes them: the order of
    /// the `CodingKeys` cases when the type declares them, else declaration order.
    static func storedProperties(of model: StructDeclSyntax) -> [StoredProperty] {
        let properties = declaredProperties(of: model)
        guard let keys = codingKeys(of: model) else {
            // Without CodingKeys of the type's own, `@CloudField(name:)` names the field and `@CloudIgnored` leaves
            // it out, and the member expansion writes CodingKeys that say so to the Codable path.
            return properties.filter { !$0.attributes.isIgnored }.map { $0.withField($0.attributes.name ?? $0.name) }
        }
        // As in synthesized Codable, a property without a coding key isn't stored, and the keys give the order.
        return keys.compactMap { key in
            properties.first { $0.name == key.name }.map { $0.withField(key.field) }
        }
    }

    /// Every stored instance property, in declaration order, each under its own name, with its attributes.
    static func declaredProperties(of model: StructDeclSyntax) -> [StoredProperty] {
        var properties: [StoredProperty] = []
        for member in model.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self),
                !variable.modifiers.contains(where: { ["static", "class", "lazy"].contains($0.name.text) })
            else { continue }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            // A wrapped property is stored (and coded) as its wrapper, `_name`, under the key `name`.
            let isWrapped = variable.attributes.contains { isPropertyWrapper($0) }
            let bindings = Array(variable.bindings)
            for (index, binding) in bindings.enumerated() {
                guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
                if let accessors = binding.accessorBlock, isComputed(accessors) { continue }
                let name = pattern.identifier.text.trimmingBackticks
                // `var a, b: Int` gives both the type written after the last of them. The generated code never
                // names the type (reads infer it); only an optional changes which methods it calls.
                let type = bindings[index...].lazy.compactMap({ $0.typeAnnotation?.type }).first
                var property = StoredProperty(
                    name: name, identifier: pattern.identifier.text, storage: isWrapped ? "_" + name : name,
                    field: name, isOptional: !isWrapped && type.map(StoredProperty.isOptional) == true,
                    isDecoded: !(isLet && binding.initializer != nil))
                // A wrapped property's initial value is its wrapper's argument, not what its storage decodes.
                if !isWrapped { property.initialValue = binding.initializer?.value.trimmedDescription }
                // Read silently: `@CloudField` reports what it can't read where it is written.
                property.attributes = FieldAttributes.read(variable.attributes, report: nil)
                properties.append(property)
            }
        }
        return properties
    }

    /// Whether an attribute of a property is a property wrapper: a custom attribute, which by convention starts with
    /// a capital, and isn't a global actor (`@MainActor`) or a macro of the standard ones (`@ObservationIgnored`).
    private static func isPropertyWrapper(_ element: AttributeListSyntax.Element) -> Bool {
        guard case .attribute(let attribute) = element,
            let name = attribute.attributeName.as(IdentifierTypeSyntax.self)?.name.text
                ?? attribute.attributeName
                .as(MemberTypeSyntax.self)?.name.text,
            let first = name.first, first.isUppercase
        else { return false }
        return !name.hasSuffix("Actor") && !["ObservationIgnored", "ObservationTracked"].contains(name)
            && !FieldAttributes.names.contains(name)
    }

    /// Whether the struct codes itself (`init(from:)` or `encode(to:)` of its own): a mapping generated from its
    /// properties wouldn't follow that code.
    static func hasOwnCodable(_ model: StructDeclSyntax) -> Bool {
        model.memberBlock.members.contains { member in
            if let initializer = member.decl.as(InitializerDeclSyntax.self) {
                let labels = initializer.signature.parameterClause.parameters.map(\.firstName.text)
                return labels == ["from"]
            }
            if let function = member.decl.as(FunctionDeclSyntax.self) {
                let labels = function.signature.parameterClause.parameters.map(\.firstName.text)
                return function.name.text == "encode" && labels == ["to"]
            }
            return false
        }
    }

    /// Whether an accessor block makes a computed property (a getter), rather than observers of a stored one.
    static func isComputed(_ accessors: AccessorBlockSyntax) -> Bool {
        switch accessors.accessors {
        case .getter: return true
        case .accessors(let list):
            return list.contains { ["get", "_read", "unsafeAddress"].contains($0.accessorSpecifier.text) }
        }
    }

    /// The model's `CodingKeys` cases in order, each with its field name: its raw value, or its name.
    static func codingKeys(of model: StructDeclSyntax) -> [(name: String, field: String)]? {
        for member in model.memberBlock.members {
            guard let keys = member.decl.as(EnumDeclSyntax.self), keys.name.text == "CodingKeys" else { continue }
            var fields: [(name: String, field: String)] = []
            for caseMember in keys.memberBlock.members {
                guard let cases = caseMember.decl.as(EnumCaseDeclSyntax.self) else { continue }
                for element in cases.elements {
                    let name = element.name.text.trimmingBackticks
                    if let raw = element.rawValue?.value.as(StringLiteralExprSyntax.self),
                        let text = raw.representedLiteralValue
                    {
                        fields.append((name, text))
                    } else {
                        fields.append((name, name))
                    }
                }
            }
            return fields
        }
        return nil
    }

    /// `public` or `package` for a model of that access, so that the members can satisfy its conformance.
    static func accessModifier(of model: StructDeclSyntax) -> String {
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
    static func literal(_ text: String) -> String {
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
