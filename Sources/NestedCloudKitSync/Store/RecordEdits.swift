import NestedCloudKitCodable

/// What one version of a record changed of another, as a write of the app sees it: the fields whose values differ,
/// and whether its parent moved.
///
/// A record's parent decides who a share reaches, and the encoder derives it from the model's parent field
/// (`CloudFieldOptions(parent:)`): a model moved to another list has a new parent as well as a new field value.
/// Every local write (a save, an update, a save of records, a `LocalCloudDatabase` request) and every conflict
/// resolution compares and applies changes through this type, so no path carries a moved field without its parent.
struct RecordEdits: Sendable, Equatable {
    /// The names of the fields whose values differ, in a fixed order.
    var fieldNames: [String]
    /// Whether the record's parent differs.
    var movesParent: Bool

    /// Whether nothing differs.
    var isEmpty: Bool { fieldNames.isEmpty && !movesParent }

    /// What `new` changed of `old`.
    init(from old: CloudRecord, to new: CloudRecord) {
        fieldNames = SyncStore.changedFieldNames(from: old, to: new)
        movesParent = old.parentID != new.parentID
    }

    /// The edits that `edited` made of `read` and that `other` doesn't already hold: what an app changed since it
    /// read a record, leaving out what it read from a local copy (`other`) with edits of its own.
    init(from read: CloudRecord, to edited: CloudRecord, notAlreadyIn other: CloudRecord) {
        self.init(from: read, to: edited)
        fieldNames.removeAll { other.fields[$0] == edited.fields[$0] }
        if other.parentID == edited.parentID { movesParent = false }
    }

    /// `target` with these edits as `source` has them: the named fields (a field `source` lacks is removed),
    /// encrypted or not as there, and `source`'s parent if it moved.
    func applied(from source: CloudRecord, to target: CloudRecord) -> CloudRecord {
        var merged = target
        for name in fieldNames {
            merged.fields[name] = source.fields[name]
            merged.setEncrypted(source.encryptedFieldNames.contains(name), fieldsNamed: [name])
        }
        if movesParent { merged.parentID = source.parentID }
        merged.clearedFieldNames = []
        return merged
    }
}

extension CloudRecord {
    /// The field whose reference names the record's parent, if one does: the model's parent field, whose edit
    /// time is the parent's.
    var parentFieldName: String? {
        guard let parentID else { return nil }
        return fields.first { field in
            if case .reference(let reference) = field.value { reference.recordID == parentID } else { false }
        }?.name
    }

    /// Moves the record's parent where its parent field now points, when a write changed the field that named the
    /// stored record's parent and left the parent as it was: a record saved by hand (read, its field changed,
    /// saved) moves as a model saved with a new parent field does. A field that no longer names a record of the
    /// zone leaves the record without a parent, as the encoder does for a `nil` parent field.
    mutating func followParentField(of stored: CloudRecord) {
        guard parentID == stored.parentID, let name = stored.parentFieldName, self[name] != stored[name] else {
            return
        }
        if case .reference(let reference)? = self[name], reference.recordID.zoneID == id.zoneID {
            parentID = reference.recordID
        } else {
            parentID = nil
        }
    }

    /// Adds the fields of the stored record that this one, a model's encoding, doesn't map: neither holds nor clears
    /// (`cleared`). Such a field is one the model doesn't know, a newer version of the app's, and a save keeps it,
    /// encrypted or not as it was. The engine's own fields are never the model's to keep.
    mutating func keepFieldsUnmapped(by cleared: [String], of stored: CloudRecord) {
        for (name, value) in stored.fields where fields[name] == nil && !cleared.contains(name) {
            fields[name] = value
            if stored.encryptedFieldNames.contains(name) { setEncrypted(true, fieldsNamed: [name]) }
        }
    }
}
