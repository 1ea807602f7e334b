import Foundation

extension CloudSchema {
    /// The schema the records of model types need: their record types, with every field the encoder writes,
    /// typed as it writes them (lists, references, assets, locations, encrypted fields), the indexes the queries
    /// need, and CloudKit's default grants.
    ///
    /// Each model is built with a value in every field (every optional set, every list of one element, every
    /// nested model built too) and encoded with `encoder`, so the schema follows the encoder's strategies and the
    /// types' ``CKRecordRepresentable/cloudKitFieldOptions``. List the types of records referenced only through
    /// ``CloudLazyReference`` too: the encoder writes only the reference.
    ///
    /// A type that can't be built from any value of each field's type (an enum with associated values, which
    /// `Codable` can't build without knowing its cases) needs a sample instead: give one with every optional set
    /// and every list holding an element.
    ///
    /// ```swift
    /// let schema = try CloudSchema(
    ///     models: [Folder.self, Note.self],
    ///     queries: [CloudQuery(recordType: "Note", sortDescriptors: [.init(.modificationDate, ascending: false)])])
    /// print(schema.text)
    /// ```
    ///
    /// - Parameters:
    ///   - models: The model types; those nested in them come with them.
    ///   - samples: Instances of models the schema can't build, each with every field set; their records'
    ///     fields join the schema, and their types need no probing.
    ///   - queries: The queries the app runs against CloudKit; each field they filter or sort on gets the index
    ///     production needs for it.
    ///   - encoder: The encoder the app writes records with.
    /// - Throws: ``CloudSchemaError``: ``CloudSchemaError/Code/unreadableModel`` for a type the schema can't
    ///   be made from (a non-`CaseIterable` enum with raw values, say), ``CloudSchemaError/Code/conflictingFieldType``
    ///   for a field two models type differently, ``CloudSchemaError/Code/unknownField`` for a
    ///   query on a field no model writes.
    public init(
        models: [any CKCodable.Type], samples: [any CKEncodable] = [], queries: [CloudQuery] = [],
        encoder: CKRecordEncoder = CKRecordEncoder()
    ) throws(CloudSchemaError) {
        self.init()
        var sampled: Set<ObjectIdentifier> = []
        for sample in samples {
            sampled.insert(ObjectIdentifier(type(of: sample)))
            for record in try Self.records(of: sample, encoder: encoder) { try add(record) }
        }
        for model in models where !sampled.contains(ObjectIdentifier(model)) {
            for record in try Self.records(of: model, samples: samples, encoder: encoder) { try add(record) }
        }
        for query in queries { try addIndexes(for: query) }
    }

    /// The records an instance of the type with every field set encodes to; a type among `samples` is its sample
    /// wherever it nests.
    ///
    /// - Throws: ``CloudSchemaError/Code/unreadableModel`` also for a `URL` field that isn't declared an asset:
    ///   the encoder writes a file URL as an `ASSET` and any other as a `STRING`, so the type of the field depends
    ///   on the value, which a guess would get wrong for the other kind (production refuses the record).
    static func records<Model: CKCodable>(
        of type: Model.Type, samples: [any CKEncodable] = [], encoder: CKRecordEncoder
    ) throws(CloudSchemaError) -> [CloudRecord] {
        let name = String(reflecting: type)
        let instance: Model
        do {
            instance = try SchemaProbe(samples: samples).instance(of: type)
        } catch let error as SchemaProbe.Failure {
            throw CloudSchemaError(
                .unreadableModel, reason: "\(name) can't be built to read its fields: \(error)",
                recoverySuggestion: "Make the nesting end with an optional or a list", underlyingError: "\(error)")
        } catch {
            var reason = "\(error)"
            if let error = error as? DecodingError {
                let context: DecodingError.Context? =
                    switch error {
                    case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context),
                        .valueNotFound(_, let context):
                        context
                    @unknown default: nil
                    }
                if let context {
                    reason = "at \(context.codingPath.pathDescription), \(context.debugDescription)"
                }
            }
            throw CloudSchemaError(
                .unreadableModel, reason: "\(name) can't be built to read its fields: \(reason)",
                recoverySuggestion: "Each field is built from a value of its type: an enum with raw values from its "
                    + "first case, so make it CaseIterable; for an enum with associated values, or an init(from:) "
                    + "that checks its values, give an instance with every field set among the samples",
                underlyingError: "\(error)")
        }
        let records = try records(of: instance, encoder: encoder)
        for record in records {
            for (field, value) in record.fields where Self.holdsProbedWebURL(value) {
                throw CloudSchemaError(
                    .unreadableModel, recordType: record.recordType, field: field,
                    reason: "the field '\(field)' of \(record.recordType) (in \(name)) is a URL, which the encoder "
                        + "writes as an ASSET when it names a file and as a STRING otherwise: its type can't be read "
                        + "from the model's type",
                    recoverySuggestion: "If it names a file, declare it an asset (CloudFieldOptions(assetFields: "
                        + "[\"\(field)\"])); if it holds web URLs, give an instance of \(record.recordType)'s model "
                        + "among the samples, with the URL set")
            }
        }
        return records
    }

    /// Whether a field holds a URL the probe built for a field not declared an asset.
    private static func holdsProbedWebURL(_ value: CloudValue) -> Bool {
        switch value {
        case .string(let string): string.hasPrefix(SchemaProbe.webURLPrefix)
        case .stringList(let strings): strings.contains { $0.hasPrefix(SchemaProbe.webURLPrefix) }
        default: false
        }
    }

    /// The records a value encodes to.
    static func records<Model: CKEncodable>(of value: Model, encoder: CKRecordEncoder) throws(CloudSchemaError)
        -> [CloudRecord]
    {
        let name = String(reflecting: Model.self)
        do {
            return try encoder.encodeRecords(value)
        } catch {
            throw CloudSchemaError(
                .unreadableModel, reason: "\(name) can't be encoded to read its fields: \(error)",
                recoverySuggestion: "Fix what the encoder reports; the schema comes from the records it writes",
                underlyingError: "\(error)")
        }
    }
}
