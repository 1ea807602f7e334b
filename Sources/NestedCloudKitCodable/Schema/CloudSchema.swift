import Foundation

/// A CloudKit container's schema: its record types, each field's type and indexes, and the security roles, read
/// from and written as CloudKit's schema language, the text `cktool export-schema` writes and `cktool
/// import-schema` reads.
///
/// Make one from the models an app stores, with the queries it runs, and check it against the schema deployed to
/// production before a release:
///
/// ```swift
/// let schema = try CloudSchema(
///     models: [Folder.self, Note.self],
///     queries: [CloudQuery(recordType: "Note", predicate: .equals(field: "pinned", value: .int64(1)))])
/// try schema.text.write(to: URL(fileURLWithPath: "schema.ckdb"), atomically: true, encoding: .utf8)
///
/// let production = try CloudSchema(parsing: String(contentsOfFile: "production.ckdb", encoding: .utf8))
/// let deployment = try schema.checkDeployable(against: production)
/// ```
///
/// The text is deterministic: record types, fields and grants sorted as `cktool export-schema` sorts them, so a
/// schema file kept in the repository changes only where the models do.
public struct CloudSchema: Sendable, Hashable, CustomStringConvertible {
    /// The record types by name; every container's `usersRecordType` among them.
    public var recordTypes: [String: RecordType]
    /// The security roles the schema creates (`CREATE ROLE`); CloudKit's own (`_world`, `_icloud`,
    /// `_creator`) aren't listed.
    public var roles: Set<String>

    /// A schema of record types and roles, with CloudKit's `Users` record type unless one is given.
    public init(recordTypes: [RecordType] = [], roles: Set<String> = []) {
        var types = [Self.usersRecordType.name: Self.usersRecordType]
        for type in recordTypes { types[type.name] = type }
        self.recordTypes = types
        self.roles = roles
    }

    /// Reads a schema written in CloudKit's schema language.
    ///
    /// The grammar is Apple's ("Integrating a Text-Based Schema into Your Workflow"): `DEFINE SCHEMA`, then
    /// `CREATE ROLE name;` and `RECORD TYPE name (field type [QUERYABLE] [SEARCHABLE] [SORTABLE], ..., GRANT
    /// READ, CREATE, WRITE TO role);` entries. Keywords are read in any case; names are letters, digits and
    /// underscores, or anything in double quotes; `//`, `--` and `/* */` comments are skipped.
    ///
    /// - Throws: ``CloudSchemaError`` with the line: ``CloudSchemaError/Code/syntax`` for text that isn't the
    ///   language, ``CloudSchemaError/Code/invalidDeclaration`` for a declaration CloudKit refuses.
    public init(parsing text: String) throws(CloudSchemaError) {
        var parser = CloudSchemaParser(text)
        self = try parser.parse()
    }

    /// The record type of a name.
    public subscript(recordType name: String) -> RecordType? {
        get { recordTypes[name] }
        set { recordTypes[name] = newValue }
    }

    /// Adds a record type's fields, indexes and grants to the schema, creating the type if needed.
    ///
    /// - Throws: ``CloudSchemaError/Code/conflictingFieldType`` for a field the schema has
    ///   with another type.
    public mutating func add(_ recordType: RecordType) throws(CloudSchemaError) {
        guard var existing = recordTypes[recordType.name] else {
            recordTypes[recordType.name] = recordType
            return
        }
        for (name, field) in recordType.fields.sorted(by: { $0.key < $1.key }) { try existing.add(name, field) }
        existing.grants.merge(recordType.grants) { $0.union($1) }
        recordTypes[recordType.name] = existing
    }

    /// Adds what another schema has: record types, fields, indexes, grants and roles.
    ///
    /// - Throws: ``CloudSchemaError/Code/conflictingFieldType`` for a field the schemas
    ///   give different types.
    public mutating func merge(_ other: CloudSchema) throws(CloudSchemaError) {
        for (_, type) in other.recordTypes.sorted(by: { $0.key < $1.key }) { try add(type) }
        roles.formUnion(other.roles)
    }

    /// Adds a record's type and fields, as CloudKit's development environment creates them when the record is
    /// first saved: with the default grants, and without indexes.
    ///
    /// - Throws: ``CloudSchemaError/Code/conflictingFieldType`` for a field the schema has
    ///   with another type.
    public mutating func add(_ record: CloudRecord) throws(CloudSchemaError) {
        var type = RecordType(record.recordType)
        // An empty list says nothing of its elements' type: the field's type comes from another record.
        for (name, value) in record.fields where !value.isEmptyList {
            try type.add(name, Field(FieldType(value.kind, encrypted: record.encryptedFieldNames.contains(name))))
        }
        try add(type)
    }

    /// The schema in CloudKit's schema language, as `cktool export-schema` writes it: roles, then record types by
    /// name, each with its fields by name (system fields included), their indexes, and its grants.
    public var text: String { CloudSchemaPrinter.text(of: self) }

    /// The schema in CloudKit's schema language (``text``).
    public var description: String { text }
}
