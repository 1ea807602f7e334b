import Foundation

/// The storage options of one record: its type's ``CloudFieldOptions`` merged with version 1.0's instance
/// methods, the declared options winning.
struct RecordFieldOptions {
    let referenceActions: [String: CloudReference.Action]
    let assetFields: Set<String>
    let encryptedFields: Set<String>
    let ignoredFields: Set<String>
    /// The names given as strings, to check against the keys the value encodes.
    let namesToCheck: Set<String>

    init(declared: CloudFieldOptions, value: any CKRecordRepresentable) {
        let instanceActions = value.referenceActions()
        let instanceIgnored = value.ignoredProperties()
        referenceActions =
            instanceActions.isEmpty
            ? declared.referenceActions
            : instanceActions.merging(declared.referenceActions) { _, declared in declared }
        assetFields = declared.assetFields
        encryptedFields = declared.encryptedFields
        ignoredFields = instanceIgnored.isEmpty ? declared.ignoredFields : declared.ignoredFields.union(instanceIgnored)
        namesToCheck =
            instanceActions.isEmpty && instanceIgnored.isEmpty
            ? declared.namesToCheck
            : declared.namesToCheck.union(instanceActions.keys).union(instanceIgnored)
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
