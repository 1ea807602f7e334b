import Foundation

/// A CloudKit record in a portable form: the same data model as CloudKit's `CKRecord`, on every platform.
///
/// A record has a type, an ID (its name and zone), named fields holding ``CloudValue``s, and, once it has been
/// saved, the ``SystemFields`` the server keeps for it. `CloudRecord` is a value type: copying one copies its
/// fields, and two records are equal when their type, ID, fields, cleared fields and system fields are equal.
///
/// ```swift
/// var record = CloudRecord(recordType: "Book", id: CloudRecord.ID(recordName: "moby-dick"))
/// record["title"] = .string("Moby-Dick")
/// record["pages"] = .int64(635)
/// ```
///
/// Fields keep the order in which they were set, so encoding the same value always gives the same record, field
/// for field; equality does not depend on that order, as a `CKRecord`'s does not.
public struct CloudRecord: Sendable, Hashable, Identifiable {
    /// The record's type, which names its schema in CloudKit (for example `"School"`).
    public var recordType: String

    /// The record's unique identity: its name and the zone that holds it.
    public var id: ID

    /// The record's fields, in the order they were set.
    public var fields: Fields

    /// The names of fields this record clears on the server when it is saved.
    ///
    /// Setting a field to `nil` on a record that exists on the server (one that has ``systemFields``) records its
    /// name here, so that a save removes the server's value instead of keeping it. A new record has nothing to
    /// clear, so setting a field to `nil` on it only removes the local value.
    public var clearedFieldNames: [String]

    /// The names of fields whose values CloudKit keeps encrypted, as `CKRecord`'s `encryptedValues` does.
    ///
    /// A field is encrypted or not for good: CloudKit's schema fixes it when the field is first saved. A name
    /// listed here always has a value in ``fields``; removing the field removes its name. Set a value with
    /// ``subscript(encrypted:)`` to mark it, or declare the fields of a model with
    /// ``CloudFieldOptions/encryptedFields``.
    public private(set) var encryptedFieldNames: Set<String>

    /// What the server keeps about the record: its change tag, creation and modification dates and users.
    ///
    /// `nil` for a record that has never been saved. A record with system fields is an update of the server's
    /// record; its change tag lets the server detect a conflicting change.
    public var systemFields: SystemFields? {
        get { systemFieldsBox?.value }
        set { systemFieldsBox = newValue.map(SystemFieldsBox.init) }
    }

    /// The system fields, boxed: they are large and rarely read, and records are copied often.
    private var systemFieldsBox: SystemFieldsBox?

    /// The record this one belongs to for sharing, as `CKRecord.parent`: a share of the parent (or of its own
    /// parent, up to the share's root) covers this record too. It must be in the same zone; CloudKit follows only
    /// this link to find what a share covers, never reference fields. `nil` for none.
    public var parentID: ID? {
        get { sharingBox?.parentID }
        set { setSharing { $0.parentID = newValue } }
    }

    /// A share record's state (``CloudShare``), `nil` for every other record. Read and change it through
    /// ``CloudShare``.
    package var shareContents: CloudShare.Contents? {
        get { sharingBox?.shareContents }
        set { setSharing { $0.shareContents = newValue } }
    }

    /// The parent and a share's state, boxed as the system fields are: most records have neither, and a record
    /// without them stays as small as before.
    private var sharingBox: SharingBox?

    private final class SharingBox: Sendable {
        let parentID: ID?
        let shareContents: CloudShare.Contents?
        init(parentID: ID?, shareContents: CloudShare.Contents?) {
            self.parentID = parentID
            self.shareContents = shareContents
        }
    }

    private mutating func setSharing(_ change: (inout (parentID: ID?, shareContents: CloudShare.Contents?)) -> Void) {
        var parts = (parentID: sharingBox?.parentID, shareContents: sharingBox?.shareContents)
        change(&parts)
        sharingBox =
            parts.parentID == nil && parts.shareContents == nil
            ? nil : SharingBox(parentID: parts.parentID, shareContents: parts.shareContents)
    }

    /// Whether the record has system fields, without copying them out of their box.
    var hasSystemFields: Bool { systemFieldsBox != nil }

    private final class SystemFieldsBox: Sendable {
        let value: SystemFields
        init(_ value: SystemFields) { self.value = value }
    }

    /// Creates a record with the given type, ID and fields.
    ///
    /// - Parameters:
    ///   - recordType: The record's type.
    ///   - id: The record's ID.
    ///   - fields: The record's fields, in order.
    ///   - systemFields: The server's system fields, for a record that has been saved before.
    public init(recordType: String, id: ID, fields: Fields = Fields(), systemFields: SystemFields? = nil) {
        self.recordType = recordType
        self.id = id
        self.fields = fields
        self.clearedFieldNames = []
        self.encryptedFieldNames = []
        self.systemFieldsBox = systemFields.map(SystemFieldsBox.init)
    }

    /// Whether both have the same type, ID, fields (in any order), encrypted fields, cleared fields, system
    /// fields, parent and share state.
    public static func == (lhs: CloudRecord, rhs: CloudRecord) -> Bool {
        lhs.recordType == rhs.recordType && lhs.id == rhs.id && lhs.fields == rhs.fields
            && lhs.encryptedFieldNames == rhs.encryptedFieldNames
            && lhs.clearedFieldNames == rhs.clearedFieldNames && lhs.systemFields == rhs.systemFields
            && lhs.parentID == rhs.parentID && lhs.shareContents == rhs.shareContents
    }

    /// Hashes the record consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(recordType)
        hasher.combine(id)
        hasher.combine(fields)
        hasher.combine(encryptedFieldNames)
        hasher.combine(clearedFieldNames)
        hasher.combine(systemFields)
        hasher.combine(parentID)
        hasher.combine(shareContents)
    }

    /// The value of the field with the given name, or `nil` if the record has no such field.
    ///
    /// Setting `nil` removes the field; on a record that exists on the server it also records the name in
    /// ``clearedFieldNames`` so that saving clears the server's value. Setting a value takes the name out of
    /// ``clearedFieldNames`` again, and keeps the field encrypted if it was.
    public subscript(name: String) -> CloudValue? {
        get { fields[name] }
        set {
            fields[name] = newValue
            if newValue == nil {
                encryptedFieldNames.remove(name)
                if systemFields != nil, !clearedFieldNames.contains(name) { clearedFieldNames.append(name) }
            } else if !clearedFieldNames.isEmpty, let index = clearedFieldNames.firstIndex(of: name) {
                clearedFieldNames.remove(at: index)
            }
        }
    }

    /// The value of a field CloudKit keeps encrypted, as `CKRecord.encryptedValues[name]`, or `nil` if the record
    /// has no such field or the field isn't encrypted.
    ///
    /// Setting a value sets the field and marks it encrypted; setting `nil` removes it, as ``subscript(_:)`` does.
    public subscript(encrypted name: String) -> CloudValue? {
        get { encryptedFieldNames.contains(name) ? fields[name] : nil }
        set {
            self[name] = newValue
            if newValue != nil { encryptedFieldNames.insert(name) }
        }
    }

    /// Marks the named fields as encrypted, or as plain; names of fields the record doesn't have are ignored, so
    /// that ``encryptedFieldNames`` only names fields that hold a value.
    public mutating func setEncrypted(_ encrypted: Bool, fieldsNamed names: some Sequence<String>) {
        for name in names {
            if encrypted, fields[name] != nil {
                encryptedFieldNames.insert(name)
            } else if !encrypted {
                encryptedFieldNames.remove(name)
            }
        }
    }

    /// The record with only the named fields (a request's `desiredKeys`), or unchanged for `nil`.
    public func keepingFields(_ names: [String]?) -> CloudRecord {
        guard let names else { return self }
        var copy = self
        copy.fields = Fields(fields.filter { names.contains($0.name) }.map { ($0.name, $0.value) })
        copy.encryptedFieldNames = encryptedFieldNames.filter { copy.fields[$0] != nil }
        return copy
    }

    /// Whether any field holds a reference or a reference list.
    package var hasReferences: Bool {
        fields.containsReferences
    }

    /// The IDs of every record this record's fields reference, in field order.
    public var referencedRecordIDs: [ID] {
        // One array, with no array per field: every record of an encoded graph is asked when it is ordered.
        var ids: [ID] = []
        for (_, value) in fields {
            switch value {
            case .reference(let reference): ids.append(reference.recordID)
            case .referenceList(let references):
                ids.reserveCapacity(ids.count + references.count)
                for reference in references { ids.append(reference.recordID) }
            default: continue
            }
        }
        return ids
    }
}
