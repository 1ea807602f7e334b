import NestedCloudKitCodable

/// A field a query filters or sorts on: one of the model's coding keys, a system field, or a name given as a
/// string (checked against the fields the model decodes when the query runs).
public struct QueryField<Model: QueryableModel>: Sendable, Hashable {
    enum Target: Sendable, Hashable {
        /// A field of the record.
        case field(String, checked: Bool)
        /// When the server first saved the record, or, before that, when the user first saved it.
        case creationDate
        /// When the record last changed: the server's modification date, or the user's newer edit.
        case modificationDate
        /// The record's name (a model's `cloudKitIdentifier`).
        case recordName
    }

    let target: Target

    /// The field a coding key names; checked by the compiler.
    public static func key(_ key: Model.CodingKeys) -> Self { Self(target: .field(key.stringValue, checked: true)) }

    /// A field named by a string: a name the model doesn't decode is a ``SyncError/invalidQuery(_:)`` error when
    /// the query runs. Prefer ``key(_:)``, which the compiler checks.
    public static func named(_ name: String) -> Self { Self(target: .field(name, checked: false)) }

    /// When the record was created: the server's creation date, or, for a record not synced yet, when the user
    /// first saved it.
    public static var creationDate: Self { Self(target: .creationDate) }

    /// When the record last changed: the later of the server's modification date and the user's last edit.
    public static var modificationDate: Self { Self(target: .modificationDate) }

    /// The record's name: the model's `cloudKitIdentifier`.
    public static var recordName: Self { Self(target: .recordName) }

    /// The field's name, for messages.
    var name: String {
        switch target {
        case .field(let name, _): name
        case .creationDate: "creationDate"
        case .modificationDate: "modificationDate"
        case .recordName: "recordName"
        }
    }
}
