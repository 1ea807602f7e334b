import Foundation

extension CloudSchema {
    /// A record type: its fields, with their types and indexes, and who may read, create and write its records.
    ///
    /// Every record type has CloudKit's six system fields (`systemFieldTypes`); they are always among
    /// ``fields``, unindexed unless a query needs them.
    public struct RecordType: Sendable, Hashable {
        /// The record type's name.
        public var name: String
        /// The fields by name, the system fields (`___recordID`, `___modTime`...) among them.
        public internal(set) var fields: [String: Field]
        /// The permissions of each security role: `_creator`, `_icloud`, `_world` or a role of the schema's own.
        public var grants: [String: Set<Permission>]

        /// A permission a role may have on a record type's records.
        public enum Permission: String, Sendable, Hashable, CaseIterable {
            /// Read the records.
            case read = "READ"
            /// Create records.
            case create = "CREATE"
            /// Change and delete records.
            case write = "WRITE"
        }

        /// The grants CloudKit gives a record type it creates: its creator may write a record, any iCloud user
        /// may create one, and anyone may read them (which only matters in the public database).
        public static let defaultGrants: [String: Set<Permission>] = [
            "_creator": [.write], "_icloud": [.create], "_world": [.read],
        ]

        /// The system fields every record type has, by their names in the schema language, with their types.
        package static let systemFieldTypes: [String: FieldType] = [
            "___createTime": FieldType(.timestamp), "___createdBy": FieldType(.reference),
            "___etag": FieldType(.string), "___modTime": FieldType(.timestamp),
            "___modifiedBy": FieldType(.reference), "___recordID": FieldType(.reference),
        ]

        /// The system field a query names (``CloudQuery/SystemField``), by its name in the schema language:
        /// `recordID` is `___recordID`, `modificationDate` `___modTime`.
        package static func systemFieldName(_ field: CloudQuery.SystemField) -> String {
            switch field {
            case .recordName: "___recordID"
            case .creationDate: "___createTime"
            case .modificationDate: "___modTime"
            case .creatorUserRecordName: "___createdBy"
            case .lastModifiedUserRecordName: "___modifiedBy"
            }
        }

        /// A record type with fields and grants; the system fields are added, unindexed, unless given.
        public init(
            _ name: String, fields: [String: Field] = [:], grants: [String: Set<Permission>] = defaultGrants
        ) {
            self.name = name
            self.fields = Self.systemFieldTypes.mapValues { Field($0) }.merging(fields) { _, given in given }
            self.grants = grants
        }

        /// The fields that aren't system fields.
        public var userFields: [String: Field] {
            fields.filter { Self.systemFieldTypes[$0.key] == nil }
        }

        /// Adds a field, or indexes to a field it has.
        ///
        /// - Throws: ``CloudSchemaError/Code/conflictingFieldType`` if the record type
        ///   has the field with another type.
        public mutating func add(_ name: String, _ field: Field) throws(CloudSchemaError) {
            guard var existing = fields[name] else {
                fields[name] = field
                return
            }
            guard existing.type == field.type else {
                throw .conflictingType(recordType: self.name, field: name, existing.type, field.type)
            }
            existing.indexes.formUnion(field.indexes)
            fields[name] = existing
        }

        /// A field of the record type, set or removed without checks; removing a system field takes its indexes
        /// away, and it stays.
        public subscript(field name: String) -> Field? {
            get { fields[name] }
            set { fields[name] = newValue ?? Self.systemFieldTypes[name].map { Field($0) } }
        }
    }

    /// The record type every container has: CloudKit's users, whose records hold the roles each user has.
    package static let usersRecordType = RecordType(
        "Users", fields: ["roles": Field(FieldType(.int64, list: true))],
        grants: ["_creator": [.write], "_world": [.read]])
}
