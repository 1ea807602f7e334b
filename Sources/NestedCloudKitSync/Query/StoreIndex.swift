import NestedCloudKitCodable

/// An index the store keeps on fields of one record type, so that queries filtering or sorting on them read only
/// the rows they return.
///
/// Declare them on the model (``QueryableModel/storeIndexes``) and hand the types to
/// ``SyncStore/declareIndexes(for:)`` when the app starts; the store creates the indexes it doesn't have and drops
/// those no longer declared. A query uses an index when it filters on the index's first fields with `equals`,
/// `isIn`, comparisons or `beginsWith`, and sorts on the next ones; any query runs without one, reading every
/// record of the type.
public struct StoreIndex: Sendable, Hashable {
    enum Key: Sendable, Hashable {
        case field(String)
        case creationDate
        case modificationDate
        case recordName
    }

    /// The record type whose records it indexes.
    public let recordType: String
    let keys: [Key]
    /// Names given as strings, checked when the index is declared.
    let namesToCheck: [String]

    /// An index on fields of a model type, by coding key: `StoreIndex(Note.self, on: .isDone, .due)`.
    ///
    /// - Parameters:
    ///   - type: The model type.
    ///   - keys: The fields, in the order queries filter and sort on them.
    ///   - recordType: The type's record type, if it declares another `cloudKitRecordType`.
    public init<Model: QueryableModel>(_ type: Model.Type, on keys: Model.CodingKeys..., recordType: String? = nil) {
        self.init(type, on: keys.map { .key($0) }, recordType: recordType)
    }

    /// An index on fields of a model type, system fields included:
    /// `StoreIndex(Note.self, on: [.key(.isDone), .creationDate])`.
    ///
    /// - Parameters:
    ///   - type: The model type.
    ///   - fields: The fields, in the order queries filter and sort on them.
    ///   - recordType: The type's record type, if it declares another `cloudKitRecordType`.
    public init<Model: QueryableModel>(_ type: Model.Type, on fields: [QueryField<Model>], recordType: String? = nil) {
        self.recordType = recordType ?? String(describing: type)
        keys = fields.map { field in
            switch field.target {
            case .field(let name, _): .field(name)
            case .creationDate: .creationDate
            case .modificationDate: .modificationDate
            case .recordName: .recordName
            }
        }
        namesToCheck = fields.compactMap { field in
            if case .field(let name, checked: false) = field.target { return name }
            return nil
        }
    }

    /// An index on fields named by strings, for records without a model type: a name that can't be a CloudKit
    /// field name is a ``SyncError/invalidIndex(_:)`` error when it is declared.
    ///
    /// - Parameters:
    ///   - recordType: The record type.
    ///   - fieldNames: The fields, in the order queries filter and sort on them.
    public init(recordType: String, fieldNames: [String]) {
        self.recordType = recordType
        keys = fieldNames.map { .field($0) }
        namesToCheck = fieldNames
    }

    /// The index's SQLite name: stable for the same declaration, so a declaration that didn't change keeps its
    /// index, and different for any change, so a changed one is made anew.
    var name: String { "ncs_index_" + StoreSQL.stableHash(definition) }

    /// What the index covers, in words that identify it.
    var definition: String {
        recordType + "(" + keys.map(StoreSQL.expression).joined(separator: ", ") + ")"
    }

    func validate() throws {
        guard !keys.isEmpty else {
            throw SyncError.invalidIndex("the index on \(recordType) names no field; name at least one")
        }
        guard StoreSQL.isValidName(recordType) else {
            throw SyncError.invalidIndex(
                "\"\(recordType)\" isn't a record type name (letters, digits and underscores, starting with a letter)")
        }
        for key in keys {
            guard case .field(let name) = key, !StoreSQL.isValidName(name) else { continue }
            throw SyncError.invalidIndex(
                "\"\(name)\" of \(recordType) isn't a field name (letters, digits and underscores, starting with a "
                    + "letter); check its spelling against the model's coding keys")
        }
    }
}
