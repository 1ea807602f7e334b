import Foundation
import NestedCloudKitCodable

/// The schemas of the emulator's containers. In development a save creates the record types and fields it uses,
/// indexed as CloudKit's development environment indexes new fields; in production a save and a query must keep
/// to the imported schema, and are refused with CloudKit's reasons when they don't. It runs on a queue of its own
/// (``FileQueueExecutor``), as it reads and writes each container's `schema.ckdb` whole.
actor SchemaRegistry {
    private struct Key: Hashable {
        var container: String
        var environment: EmulatorEnvironment
    }

    private var schemas: [Key: CloudSchema] = [:]
    private let storage: EmulatorStorage
    /// The schema each container starts with in the served environment, if the emulator was given one.
    private let initial: (schema: CloudSchema, environment: EmulatorEnvironment)?

    /// The wire types of fields CloudKit's development environment doesn't index when a save creates them.
    private static let unindexedKinds = Set(
        [CloudValue.Kind.bytes, .asset, .assetList, .locationList].map(\.rawValue))

    private let fileQueue = FileQueueExecutor(label: "NestedCloudKitEmulator.schemas")
    nonisolated var unownedExecutor: UnownedSerialExecutor { fileQueue.asUnownedSerialExecutor() }

    init(storage: EmulatorStorage, initial: CloudSchema?, environment: EmulatorEnvironment) {
        self.storage = storage
        self.initial = initial.map { ($0, environment) }
    }

    /// A container's schema in an environment: the one imported or grown by saves; else the one the emulator was
    /// started with (which wins over a file an earlier run left); else an empty one.
    /// - Throws: An internal error if the schema's file can't be read or parsed: an empty schema in its place would
    ///   refuse every production save, and the next development save would write over the file.
    func schema(container: String, environment: EmulatorEnvironment) throws(ServerError) -> CloudSchema {
        let key = Key(container: container, environment: environment)
        if let schema = schemas[key] { return schema }
        var loaded = CloudSchema()
        if let initial, initial.environment == environment {
            loaded = initial.schema
        } else if let file = file(for: key), FileManager.default.fileExists(atPath: file.path) {
            do {
                loaded = try CloudSchema(parsing: try String(contentsOf: file, encoding: .utf8))
            } catch {
                let reason = (error as? CloudSchemaError)?.description ?? FilePaths.removed(from: "\(error)")
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
        let schema: CloudSchema
        do {
            schema = try CloudSchema(parsing: text)
        } catch {
            throw .badRequest("schema: \(error)")
        }
        try store(schema, Key(container: container, environment: environment))
    }

    func reset() { schemas = [:] }

    /// Checks a record to save against the schema; in development, adds what it lacks. A share is CloudKit's own
    /// record type, which no schema declares.
    func check(_ record: CloudRecord, key: DatabaseKey) throws(ServerError) {
        guard record.recordType != CloudShare.recordType else { return }
        var schema = try schema(container: key.container, environment: key.environment)
        var changed = false
        var type: CloudSchema.RecordType
        if let known = schema[recordType: record.recordType] {
            type = known
        } else {
            guard key.environment == .development else {
                throw .badRequest("Cannot create new type \(record.recordType) in production schema")
            }
            type = CloudSchema.RecordType(record.recordType)
            changed = true
        }
        for (name, value) in record.fields {
            if let field = type[field: name] {
                guard field.type.holds(value) else {
                    throw .badRequest(
                        "invalid attempt to set value type \(value.kind) for field '\(name)' for type '\(record.recordType)', defined to be: \(field.type.valueKind?.rawValue ?? field.type.description)"
                    )
                }
                continue
            }
            guard key.environment == .development else {
                throw .badRequest(
                    "Cannot create new field '\(name)' in production schema for type '\(record.recordType)'")
            }
            let kind = value.kind
            var indexes: CloudSchema.Indexes = []
            if !Self.unindexedKinds.contains(kind.rawValue) {
                indexes = kind.isList ? .queryable : [.queryable, .sortable]
                if kind == .string { indexes.insert(.searchable) }
            }
            type[field: name] = CloudSchema.Field(CloudSchema.FieldType(kind), indexes: indexes)
            changed = true
        }
        if changed {
            schema[recordType: record.recordType] = type
            try store(schema, Key(container: key.container, environment: key.environment))
        }
    }

    /// Checks a query against a production schema's indexes, as ``CloudSchema/missingIndexes(for:)`` says.
    /// Development answers every query, as if each field had every index (FIDELITY.md).
    func checkQuery(_ query: CloudQuery, key: DatabaseKey) throws(ServerError) {
        guard key.environment == .production else { return }
        let schema = try schema(container: key.container, environment: key.environment)
        guard schema[recordType: query.recordType] != nil else {
            throw .badRequest("Did not find record type: \(query.recordType)")
        }
        guard let missing = schema.missingIndexes(for: query).first else { return }
        let index =
            missing.servedBy.contains(.searchable)
            ? "searchable" : missing.servedBy.contains(.queryable) ? "queryable" : "sortable"
        throw .badRequest("Field '\(missing.field)' is not marked \(index)")
    }

    private func store(_ schema: CloudSchema, _ key: Key) throws(ServerError) {
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
