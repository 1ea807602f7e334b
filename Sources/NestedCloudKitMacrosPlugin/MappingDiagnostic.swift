import SwiftDiagnostics

/// What `@CloudRecord` can't map, and how to fix it.
enum MappingDiagnostic: DiagnosticMessage {
    case notAStruct
    case ownCodable

    var message: String {
        switch self {
        case .notAStruct:
            "@CloudRecord maps structs; a class or enum needs its CloudRecordMappable conformance written by hand "
                + "(or stays Codable)"
        case .ownCodable:
            "@CloudRecord can't follow a hand-written init(from:) or encode(to:); write the CloudRecordMappable "
                + "conformance by hand so that it reads and writes the same fields"
        }
    }

    var diagnosticID: MessageID {
        switch self {
        case .notAStruct: MessageID(domain: "NestedCloudKitMacros", id: "notAStruct")
        case .ownCodable: MessageID(domain: "NestedCloudKitMacros", id: "ownCodable")
        }
    }

    var severity: DiagnosticSeverity { .error }
}
