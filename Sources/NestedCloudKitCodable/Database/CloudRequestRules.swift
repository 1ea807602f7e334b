import Foundation

/// What CloudKit refuses in a request whatever the server holds: names and values it can't store, references to
/// another zone, a record named twice, a zone name it doesn't accept. Every backend checks these before anything
/// reaches a server (the Apple bridge and the Web Services client too), so a refusal names the record and field;
/// the servers' rules (`CloudModificationPlan`) build on them.
package enum CloudRequestRules {
    /// CloudKit's limit on a record's field data, 1 MB; assets are stored beside the record and don't count.
    package static let maximumRecordSize = RecordValidator.maximumRecordSize

    /// The bytes of field data a record holds, as its 1 MB limit counts them: each field's name and value, an asset
    /// counting nothing. The encoder counts the same way, so a record it accepts is one every database accepts.
    package static func fieldDataSize(of record: CloudRecord) -> Int {
        fieldDataSize(of: record.fields)
    }

    /// The bytes of field data these fields hold, counted as `fieldDataSize(of:)` counts them.
    package static func fieldDataSize(of fields: CloudRecord.Fields) -> Int {
        var size = 0
        for (name, value) in fields { size += name.utf8.count + RecordValidator.estimatedSize(of: value) }
        return size
    }

    /// Why CloudKit would refuse to create the zone (its name or owner name empty, too long, outside ASCII or
    /// with a NUL), or `nil`.
    package static func refusal(creating zone: CloudRecord.ZoneID) -> CloudDatabaseError? {
        RecordValidator.problem(with: zone).map(CloudDatabaseError.invalidArguments)
    }

    /// Why CloudKit would refuse to save the record whatever the server holds, or `nil`: a record name, type or
    /// field name it doesn't accept, a reference to a record in another zone, or a value it can't store (a date
    /// that isn't finite or is out of range, a location with a part that isn't finite).
    ///
    /// Backends check this before anything reaches the server, so the refusal names the record and field.
    package static func refusal(saving record: CloudRecord) -> CloudDatabaseError? {
        if let problem = RecordValidator.problem(withNamesOf: record) { return .invalidArguments(problem) }
        if let refusal = ShareRules.refusal(saving: record) { return refusal }
        for target in record.referencedRecordIDs where target.zoneID != record.id.zoneID {
            return .invalidArguments(
                "\(record.id) references \(target), in another zone; references must stay in their record's zone")
        }
        for (name, value) in record.fields where value.storedByCloudKit == nil {
            return .invalidArguments(
                "\(record.id)'s field \(name) holds a \(value.kind) value CloudKit can't store: a date must be finite and "
                    + "within 275,000 years of 1970, and every part of a location finite"
            )
        }
        return nil
    }

    /// Why CloudKit would refuse the whole request, or `nil`: it saves or deletes a record more than once.
    package static func refusal(saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID])
        -> CloudDatabaseError?
    {
        refusal(mentioning: recordsToSave.map(\.id) + recordIDsToDelete)
    }

    package static func refusal(mentioning ids: [CloudRecord.ID]) -> CloudDatabaseError? {
        var mentioned: Set<CloudRecord.ID> = []
        for id in ids where !mentioned.insert(id).inserted {
            return .invalidArguments("the request saves or deletes \(id) more than once")
        }
        return nil
    }

}
