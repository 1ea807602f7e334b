import Foundation

/// The storage options of one record: its type's ``CloudFieldOptions`` merged with version 1.0's instance
/// methods, the declared options winning.
///
/// A class, immutable: nearly every value adds nothing through the instance methods, so its records share their
/// type's options (see ``EncodedModelType``), and a record's writer holds them with one retain, not five.
final class RecordFieldOptions: Sendable {
    let referenceActions: [String: CloudReference.Action]
    let assetFields: Set<String>
    let encryptedFields: Set<String>
    let ignoredFields: Set<String>
    /// The names given as strings, to check against the keys the value encodes.
    let namesToCheck: Set<String>
    /// The field whose reference is the record's parent.
    let parentField: String?
    /// The type's record layout version (``CKRecordRepresentable/cloudKitSchemaVersion``); 0 writes none.
    let schemaVersion: Int

    /// The options of a type's values that add none of their own.
    init(declared: CloudFieldOptions, schemaVersion: Int) {
        self.schemaVersion = schemaVersion
        referenceActions = declared.referenceActions
        assetFields = declared.assetFields
        encryptedFields = declared.encryptedFields
        ignoredFields = declared.ignoredFields
        namesToCheck = declared.namesToCheck
        parentField = declared.parentField
    }

    /// The options of one value: its type's, unless the value adds some through the instance methods.
    static func of<Value: CKRecordRepresentable>(_ value: Value, type: EncodedModelType) -> RecordFieldOptions {
        let instanceActions = value.referenceActions()
        let instanceIgnored = value.ignoredProperties()
        guard instanceActions.isEmpty, instanceIgnored.isEmpty else {
            return RecordFieldOptions(
                declared: type.options, schemaVersion: type.fieldOptions.schemaVersion,
                instanceActions: instanceActions,
                instanceIgnored: instanceIgnored)
        }
        return type.fieldOptions
    }

    private init(
        declared: CloudFieldOptions, schemaVersion: Int, instanceActions: [String: CloudReference.Action],
        instanceIgnored: [String]
    ) {
        self.schemaVersion = schemaVersion
        referenceActions =
            instanceActions.isEmpty
            ? declared.referenceActions
            : instanceActions.merging(declared.referenceActions) { _, declared in declared }
        assetFields = declared.assetFields
        encryptedFields = declared.encryptedFields
        ignoredFields = instanceIgnored.isEmpty ? declared.ignoredFields : declared.ignoredFields.union(instanceIgnored)
        namesToCheck = declared.namesToCheck.union(instanceActions.keys).union(instanceIgnored)
        parentField = declared.parentField
    }

    /// The reference action of a field: its declared one, or ``CloudReference/Action/none``.
    func referenceAction(forField name: String) -> CloudReference.Action {
        referenceActions.isEmpty ? .none : referenceActions[name] ?? .none
    }

    /// Whether a property is left out of the record. Nearly no type ignores any, so the set is rarely hashed into.
    func ignores(_ name: String) -> Bool {
        !ignoredFields.isEmpty && ignoredFields.contains(name)
    }

    /// Marks the record's encrypted fields, refusing values CloudKit can't encrypt, checks its asset fields, gives
    /// it its parent, and writes its type's layout version.
    func apply(to record: inout CloudRecord, at path: CodingPath) throws {
        try encrypt(&record, at: path)
        if !assetFields.isEmpty { try checkAssets(of: record, at: path) }
        if let parentField { try assignParent(from: parentField, to: &record, at: path) }
        if schemaVersion > 0 {
            guard record.fields[CloudRecord.schemaVersionFieldName] == nil else {
                throw CKCodableError.duplicateFieldName(
                    CloudRecord.schemaVersionFieldName, recordID: record.id,
                    at: path.appending(NamedKey(CloudRecord.schemaVersionFieldName)))
            }
            record.fields[CloudRecord.schemaVersionFieldName] = .int64(Int64(schemaVersion))
        }
    }

    /// Refuses an asset field that holds something else, which would otherwise be stored silently as that value
    /// (a `String` marked an asset, say). An empty list holds no value to refuse.
    private func checkAssets(of record: CloudRecord, at path: CodingPath) throws {
        for name in assetFields.sorted() {
            guard let value = record.fields[name] else { continue }
            switch value.kind {
            case .asset, .assetList: continue
            default:
                if value.listElements?.isEmpty == true { continue }
                throw CKCodableError.invalidAssetField(
                    kind: value.kind, recordID: record.id, field: name, at: path.appending(NamedKey(name)))
            }
        }
    }

    /// Makes the record referenced by the parent field the record's parent; a field left out (`nil`) means no
    /// parent.
    private func assignParent(from field: String, to record: inout CloudRecord, at path: CodingPath) throws {
        switch record.fields[field] {
        case .reference(let reference)?:
            record.parentID = reference.recordID
        case nil:
            record.parentID = nil
        case let value?:
            throw CKCodableError.invalidParentField(
                kind: value.kind, recordID: record.id, field: field, at: path.appending(NamedKey(field)))
        }
    }

    /// Marks the record's encrypted fields, refusing values CloudKit can't encrypt.
    private func encrypt(_ record: inout CloudRecord, at path: CodingPath) throws {
        guard !encryptedFields.isEmpty else { return }
        for name in encryptedFields.sorted() {
            guard let value = record.fields[name] else { continue }
            switch value.kind {
            case .reference, .referenceList, .asset, .assetList:
                throw CKCodableError.unencryptableValue(
                    kind: value.kind, recordID: record.id, field: name, at: path.appending(NamedKey(name)))
            default:
                record.setEncrypted(true, fieldsNamed: [name])
            }
        }
    }

    /// Refuses options given by name that name nothing the value has (most likely a misspelt key): `encoded` are
    /// the keys the value wrote, in order, `ignored` those of them it wrote to ignored properties.
    func checkNames(
        encoded: [String], ignored: Set<String>, record: CloudRecord, value: any CKEncodable, at path: CodingPath
    ) throws {
        guard !namesToCheck.isEmpty else { return }
        let unknown = unknownNames(encoded: ignored.union(encoded), record: record, value: value)
        guard let first = unknown.first else { return }
        throw CKCodableError.unknownFieldOption(
            first, recordType: record.recordType, recordID: record.id, knownKeys: encoded, at: path)
    }

    /// Whether a name given as a string names nothing the value has: not a key it encoded (`encodedNames`), not
    /// a field of its record, not one of its stored properties. The properties are read only when a name isn't
    /// found otherwise, so a model that leaves a `nil` value's key out of its `encode(to:)` isn't refused.
    func unknownNames(encoded encodedNames: Set<String>, record: CloudRecord, value: Any) -> [String] {
        var unknown = namesToCheck.filter {
            !encodedNames.contains($0) && record.fields[$0] == nil && !record.clearedFieldNames.contains($0)
        }
        guard !unknown.isEmpty else { return [] }
        // A property wrapper's storage is named with a leading underscore.
        let properties = Set(
            Mirror(reflecting: value).children.compactMap {
                $0.label.map { $0.hasPrefix("_") ? String($0.dropFirst()) : $0 }
            })
        unknown.subtract(properties)
        return unknown.sorted()
    }
}
