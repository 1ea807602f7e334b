import Foundation
import NestedCloudKitCodable

/// The schemas of the emulator's containers. In development a save creates the record types and fields it uses,
/// indexed as CloudKit's development environment indexes new fields; in production a save and a query must keep
/// to the imported schema, and are refused with CloudKit's reasons when they don't.
actor SchemaRegistry {
    private struct Key: Hashable {
        var container: String
        var environment: EmulatorEnvironment
    }

    private var schemas: [Key: RecordSchema] = [:]
    private let storage: EmulatorStorage

    /// The wire types of fields CloudKit's development environment doesn't index when a save creates them.
    private static let unindexedKinds = Set(
        [CloudValue.Kind.bytes, .asset, .assetList, .locationList].map(\.rawValue))

    init(storage: EmulatorStorage) {
        self.storage = storage
    }

    /// A container's schema in an environment: the one imported or grown by saves, or an empty one.
    /// - Throws: An internal error if the schema's file can't be read or parsed: an empty schema in its place would
    ///   refuse every production save, and the next development save would write over the file.
    func schema(container: String, environment: EmulatorEnvironment) throws(ServerError) -> RecordSchema {
        let key = Key(container: container, environment: environment)
        if let schema = schemas[key] { return schema }
        var loaded = RecordSchema()
        if let file = file(for: key), FileManager.default.fileExists(atPath: file.path) {
            do {
                loaded = try RecordSchema(parsing: try String(contentsOf: file, encoding: .utf8))
            } catch {
                let reason = (error as? ServerError)?.reason ?? FilePaths.removed(from: "\(error)")
                throw ServerError(
                    .internalError,
                    "the schema of \(container) in \(environment.rawValue) can't be read (\(reason)); fix its "
                        + "schema.ckdb file under the data directory, or move it aside to start from an empty schema")
            }
        }
        schemas[key] = loaded
        return loaded
    }

    func importSchema(_ text: String, container: String, environment: EmulatorEnvironment) throws(ServerError) {
        let schema = try RecordSchema(parsing: text)
        try store(schema, Key(container: container, environment: environment))
    }

    func reset() { schemas = [:] }

    /// Checks a record to save against the schema; in development, adds what it lacks.
    func check(_ record: CloudRecord, key: DatabaseKey) throws(ServerError) {
        var schema = try schema(container: key.container, environment: key.environment)
        var fields = schema.types[record.recordType]
        if fields == nil {
            guard key.environment == .development else {
                throw .badRequest("Cannot create new type \(record.recordType) in production schema")
            }
            fields = [:]
        }
        var changed = fields == [:] && schema.types[record.recordType] == nil
        for (name, value) in record.fields {
            let kind = value.kind
            let type = kind.rawValue
            if let field = fields?[name] {
                let isEmptyList = value.isEmptyList
                if field.type != type && !isEmptyList {
                    throw .badRequest(
                        "invalid attempt to set value type \(type) for field '\(name)' for type '\(record.recordType)', defined to be: \(field.type)"
                    )
                }
                continue
            }
            guard key.environment == .development else {
                throw .badRequest(
                    "Cannot create new field '\(name)' in production schema for type '\(record.recordType)'")
            }
            let indexable = !Self.unindexedKinds.contains(type)
            fields?[name] = RecordSchema.Field(
                type: type, isQueryable: indexable, isSortable: indexable && !kind.isList,
                isSearchable: kind == .string)
            changed = true
        }
        if changed {
            schema.types[record.recordType] = fields
            try store(schema, Key(container: key.container, environment: key.environment))
        }
    }

    /// Checks a query against a production schema's indexes. Development answers every query, as if each field
    /// had every index (FIDELITY.md).
    func checkQuery(recordType: String, filters: [QueryFilter], sorts: [QueryField], key: DatabaseKey)
        throws(ServerError)
    {
        guard key.environment == .production else { return }
        let schema = try schema(container: key.container, environment: key.environment)
        guard let fields = schema.types[recordType] else {
            throw .badRequest("Did not find record type: \(recordType)")
        }
        // A query without a filter goes over every record of the type by its record name: CloudKit refuses it
        // unless the schema indexes `recordName` (QUERYABLE on ___recordID).
        if filters.isEmpty, fields[QueryField.System.recordName.rawValue]?.isQueryable != true {
            throw .badRequest("Field '\(QueryField.System.recordName.rawValue)' is not marked queryable")
        }
        for filter in filters {
            let field = fields[filter.field.name]
            if filter.needsSearchable {
                guard field?.isSearchable == true else {
                    throw .badRequest("Field '\(filter.field.name)' is not marked searchable")
                }
            } else if filter.needsSortable {
                guard field?.isSortable == true || field?.isQueryable == true else {
                    throw .badRequest("Field '\(filter.field.name)' is not marked queryable")
                }
            } else {
                guard field?.isQueryable == true else {
                    throw .badRequest("Field '\(filter.field.name)' is not marked queryable")
                }
            }
        }
        for sort in sorts where fields[sort.name]?.isSortable != true {
            throw .badRequest("Field '\(sort.name)' is not marked sortable")
        }
    }

    private func store(_ schema: RecordSchema, _ key: Key) throws(ServerError) {
        schemas[key] = schema
        guard let file = file(for: key) else { return }
        do {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(schema.text.utf8).write(to: file, options: .atomic)
        } catch {
            throw ServerError(
                .internalError,
                "couldn't write the schema of container \(key.container) under the data directory: \(FilePaths.removed(from: "\(error)"))"
            )
        }
    }

    private func file(for key: Key) -> URL? {
        guard case .directory(let path) = storage else { return nil }
        return URL(fileURLWithPath: path).appendingPathComponent(DatabaseKey.safe(key.container))
            .appendingPathComponent(key.environment.rawValue).appendingPathComponent("schema.ckdb")
    }
}
