import SwiftDiagnostics

/// What `@CloudRecord` can't map, and how to fix it.
enum MappingDiagnostic: DiagnosticMessage {
    case notAStruct
    case missingTypeAnnotation(String)

    var message: String {
        switch self {
        case .notAStruct:
            "@CloudRecord maps structs; a class or enum needs its CloudRecordMappable conformance written by hand "
                + "(or stays Codable)"
        case .missingTypeAnnotation(let name):
            "@CloudRecord needs the type of '\(name)' written out ('var \(name): Type = …') to map it"
        }
    }

    var diagnosticID: MessageID {
        switch self {
        case .notAStruct: MessageID(domain: "NestedCloudKitMacros", id: "notAStruct")
        case .missingTypeAnnotation: MessageID(domain: "NestedCloudKitMacros", id: "missingTypeAnnotation")
        }
    }

    var severity: DiagnosticSeverity { .error }
}
