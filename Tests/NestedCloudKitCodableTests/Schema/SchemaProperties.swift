import Foundation
import NestedCloudKitCodable
import PropertyBased
import TestSupport
import Testing

/// Random model changes (a field added, removed, retyped, encrypted or renamed; an index or a record type
/// added) classified as CloudKit's documentation says production takes them: a deployed field never changes
/// type, nothing deployed is deleted, everything else is added. A failure reports the seed that replays it.
@Suite("Schema properties")
struct SchemaProperties {
    typealias FieldType = CloudSchema.FieldType

    @Test func modelChangesAreClassifiedAsCloudKitDeploysThem() async {
        await propertyCheck(count: 300, input: GeneratedModels.seeds) { seed throws in
            try Self.classify(seed: seed)
        }
    }

    /// A sequence the property found: a field retyped, then encrypted back to its deployed type, which deploys.
    @Test func aFieldRetypedThenEncryptedBackToItsDeployedTypeDeploys() throws {
        try Self.classify(seed: 14_222_281_250_028_116_190)
    }

    /// One random sequence of changes, classified, checked against the rules.
    static func classify(seed: UInt64) throws {
        var random = GeneratedModels.Maker(state: seed)
        let production = Self.schema(&random)
        var models = production
        // What the rules say of each change, kept apart from the implementation.
        var retyped: Set<String> = []
        var removed: Set<String> = []
        var added: Set<String> = []
        for _ in 0..<random.int(1...6) {
            let typeName = production.recordTypes.keys.filter { $0 != "Users" }.sorted()[
                random.int(0...(production.recordTypes.count - 2))]
            var type = models.recordTypes[typeName]!
            let names = type.userFields.keys.sorted()
            let name = names.isEmpty ? nil : names[random.int(0...(names.count - 1))]
            let key = { (field: String) in "\(typeName).\(field)" }
            switch random.int(0...6) {
            case 0:
                let new = "added\(random.int(0...999))"
                if type.fields[new] == nil {
                    type[field: new] = .init(Self.fieldType(&random))
                    added.insert(key(new))
                }
            case 1:
                if let name {
                    type[field: name] = nil
                    if production.recordTypes[typeName]?.fields[name] != nil { removed.insert(key(name)) }
                    added.remove(key(name))
                    retyped.remove(key(name))
                }
            case 2:
                if let name, let field = type.fields[name] {
                    let new = Self.fieldType(&random)
                    type[field: name] = .init(new, indexes: field.indexes.intersection(new.allowedIndexes))
                    if let deployed = production.recordTypes[typeName]?.fields[name] {
                        if new != deployed.type { retyped.insert(key(name)) } else { retyped.remove(key(name)) }
                    }
                }
            case 3:
                if let name, let field = type.fields[name], FieldType.Base.encryptable.contains(field.type.base),
                    !field.type.isEncrypted
                {
                    var encrypted = field.type
                    encrypted.isEncrypted = true
                    type[field: name] = .init(encrypted)
                    // Encrypting a field retyped earlier can give it back its deployed type.
                    if let deployed = production.recordTypes[typeName]?.fields[name] {
                        if encrypted != deployed.type { retyped.insert(key(name)) } else { retyped.remove(key(name)) }
                    }
                }
            case 4:
                if let name, let field = type.fields[name], !retyped.contains(key(name)) {
                    let new = "renamed\(random.int(0...999))"
                    if type.fields[new] == nil {
                        type[field: name] = nil
                        type[field: new] = field
                        if production.recordTypes[typeName]?.fields[name] != nil { removed.insert(key(name)) }
                        added.remove(key(name))
                        added.insert(key(new))
                    }
                }
            case 5:
                if let name, var field = type.fields[name] {
                    field.indexes.formUnion(field.type.allowedIndexes)
                    type[field: name] = field
                }
            default:
                let new = "NewType\(random.int(0...999))"
                if models.recordTypes[new] == nil {
                    models.recordTypes[new] = CloudSchema.RecordType(
                        new, fields: ["a": .init(Self.fieldType(&random))])
                    added.insert(new)
                }
            }
            models.recordTypes[typeName] = type
        }

        let deployment = models.deployment(onto: production)
        let refused = Set(deployment.refusals.map { "\($0.recordType).\($0.field ?? "")" })
        #expect(refused == retyped)
        #expect((try? models.checkDeployable(against: production)) == (retyped.isEmpty ? deployment : nil))
        let retained = Set(
            deployment.retained.compactMap { change -> String? in
                if case .fieldRetained = change.kind { return "\(change.recordType).\(change.field ?? "")" }
                return nil
            })
        #expect(retained == removed)
        let additions = Set(
            deployment.additions.compactMap { change -> String? in
                switch change.kind {
                case .fieldAdded: "\(change.recordType).\(change.field ?? "")"
                case .recordTypeAdded: change.recordType
                default: nil
                }
            })
        #expect(additions == added)

        // The schema to import loses nothing production has, and keeps each deployed declaration.
        let imported = deployment.schema
        for (typeName, type) in production.recordTypes {
            #expect(imported.recordTypes[typeName]?.grants == type.grants)
            for (name, field) in type.fields {
                let kept = imported.recordTypes[typeName]?.fields[name]
                #expect(kept?.type == field.type)
                #expect(kept?.indexes.isSuperset(of: field.indexes) == true)
            }
        }
        #expect(try CloudSchema(parsing: imported.text) == imported)
        // Once it is deployed, production has everything the models need, unless a change was refused.
        let after = models.deployment(onto: imported)
        #expect(after.additions.isEmpty)
        #expect(after.refusals.count == deployment.refusals.count)
    }

    @Test func anyTextReadsOrThrowsAndNeverTraps() async {
        let valid = Array(SchemaLanguageTests.exported.unicodeScalars)
        let pieces: [String] = [
            "(", ")", ",", ";", "<", ">", "\"", "LIST", "GRANT", "/*", "--", "ENCRYPTED", "\n", " ",
        ]
        await propertyCheck(count: 500, input: GeneratedModels.seeds) { seed throws in
            var random = GeneratedModels.Maker(state: seed)
            var text = String.UnicodeScalarView(valid)
            for _ in 0..<random.int(1...8) {
                let at = text.index(text.startIndex, offsetBy: random.int(0...(text.count - 1)))
                switch random.int(0...2) {
                case 0: text.remove(at: at)
                case 1: text.insert(contentsOf: pieces[random.int(0...(pieces.count - 1))].unicodeScalars, at: at)
                default: text.replaceSubrange(at...at, with: random.text().unicodeScalars)
                }
            }
            do {
                let schema = try CloudSchema(parsing: String(text))
                #expect(try CloudSchema(parsing: schema.text) == schema)
            } catch let error as CloudSchemaError {
                #expect(error.line.map { $0 >= 1 } ?? true)
            } catch {
                Issue.record("not a CloudSchemaError: \(error)")
            }
        }
    }

    private static func schema(_ random: inout GeneratedModels.Maker) -> CloudSchema {
        var types: [CloudSchema.RecordType] = []
        for index in 0..<random.int(1...3) {
            var fields: [String: CloudSchema.Field] = [:]
            for field in 0..<random.int(1...6) {
                let type = fieldType(&random)
                let indexes = CloudSchema.Indexes(rawValue: random.int(0...7)).intersection(type.allowedIndexes)
                fields["field\(field)"] = .init(type, indexes: indexes)
            }
            types.append(CloudSchema.RecordType("Type\(index)", fields: fields))
        }
        return CloudSchema(recordTypes: types)
    }

    private static func fieldType(_ random: inout GeneratedModels.Maker) -> FieldType {
        let bases: [FieldType.Base] = [.asset, .bytes, .double, .int64, .location, .reference, .string, .timestamp]
        let base = bases[random.int(0...(bases.count - 1))]
        return FieldType(
            base, encrypted: FieldType.Base.encryptable.contains(base) && random.int(0...3) == 0,
            list: random.int(0...3) == 0)
    }
}
