import SwiftDiagnostics

/// What `@CloudRecord` can't map, and how to fix it.
enum MappingDiagnostic: DiagnosticMessage {
    case notAStruct
    case ownCodable
    case nameNotLiteral
    case flagNotLiteral
    case renameWithCodingKeys
    case ignoreWithCodingKeys
    case optionsTwice
    case secondParent
    case notAStoredProperty(String)
    case assetOfType(String)
    case parentOfType(String)

    var message: String {
        switch self {
        case .notAStruct:
            "@CloudRecord maps structs; a class or enum needs its CloudRecordMappable conformance written by hand "
                + "(or stays Codable)"
        case .ownCodable:
            "@CloudRecord can't follow a hand-written init(from:) or encode(to:); write the CloudRecordMappable "
                + "conformance by hand so that it reads and writes the same fields"
        case .nameNotLiteral:
            "@CloudField(name:) takes a string literal: the field's name must be known when the model compiles"
        case .flagNotLiteral:
            "@CloudField's asset:, encrypted: and parent: take true or false, written as literals"
        case .renameWithCodingKeys:
            "this type declares CodingKeys, which name its fields: rename the field there (case title = \"name\") "
                + "instead of with @CloudField(name:)"
        case .ignoreWithCodingKeys:
            "this type declares CodingKeys, which list its stored properties: leave the property out of them "
                + "instead of marking it @CloudIgnored"
        case .optionsTwice:
            "this type declares cloudKitFieldOptions: give the field's options there, or move them all to "
                + "@CloudField attributes, not both"
        case .secondParent:
            "a record has one parent: mark only one property @CloudField(parent: true)"
        case .assetOfType(let type):
            "@CloudField(asset: true) stores Data, file URLs and CloudAssets (or lists of them) as assets, and a "
                + "\(type) can't be one: remove asset: true, or make the property Data"
        case .parentOfType(let type):
            "@CloudField(parent: true) makes the one record the property references the record's parent, and a "
                + "\(type) isn't a reference to one record: mark the property that holds the parent model, a "
                + "CloudLazyReference or a CloudReference"
        case .notAStoredProperty(let attribute):
            "@\(attribute) applies to a stored property of a @CloudRecord struct; a computed, static or lazy "
                + "property isn't stored in the record"
        }
    }

    var diagnosticID: MessageID {
        switch self {
        case .notAStruct: MessageID(domain: "NestedCloudKitMacros", id: "notAStruct")
        case .ownCodable: MessageID(domain: "NestedCloudKitMacros", id: "ownCodable")
        case .nameNotLiteral: MessageID(domain: "NestedCloudKitMacros", id: "nameNotLiteral")
        case .flagNotLiteral: MessageID(domain: "NestedCloudKitMacros", id: "flagNotLiteral")
        case .renameWithCodingKeys: MessageID(domain: "NestedCloudKitMacros", id: "renameWithCodingKeys")
        case .ignoreWithCodingKeys: MessageID(domain: "NestedCloudKitMacros", id: "ignoreWithCodingKeys")
        case .optionsTwice: MessageID(domain: "NestedCloudKitMacros", id: "optionsTwice")
        case .secondParent: MessageID(domain: "NestedCloudKitMacros", id: "secondParent")
        case .notAStoredProperty: MessageID(domain: "NestedCloudKitMacros", id: "notAStoredProperty")
        case .assetOfType: MessageID(domain: "NestedCloudKitMacros", id: "assetOfType")
        case .parentOfType: MessageID(domain: "NestedCloudKitMacros", id: "parentOfType")
        }
    }

    var severity: DiagnosticSeverity { .error }
}
