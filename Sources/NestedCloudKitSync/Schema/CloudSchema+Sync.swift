import NestedCloudKitCodable

extension CloudSchema {
    /// The schema a sync store's records need in CloudKit: the models' record types and fields (as
    /// `CloudSchema.init(models:samples:queries:encoder:)` makes them, with the store's encoder), the sync's own
    /// fields on each, and the indexes its fetches and the app's indexes and queries need.
    ///
    /// The sync writes two fields of its own on every record, ``SyncMetadataFields/editTime`` (`INT64`) and
    /// ``SyncMetadataFields/fieldEditTimes`` (`STRING`): production refuses an upload whose fields it doesn't
    /// have, so deploy them with the models. A zone without change tokens (`SyncZone/hasChangeTokens`: the
    /// public database, the default zone) is fetched with queries, by modification date and by record name, which
    /// need `___modTime` QUERYABLE SORTABLE and `___recordID` QUERYABLE on its record types.
    ///
    /// ```swift
    /// let schema = try CloudSchema(
    ///     syncing: [Folder.self, Note.self], indexes: Note.storeIndexes)
    /// print(schema.text)   // or write it to schema.ckdb, or check it: schema.checkDeployable(against: production)
    /// ```
    ///
    /// - Parameters:
    ///   - models: The model types the store saves; those nested in them come with them.
    ///   - samples: Instances of models the schema can't build, each with every field set.
    ///   - zones: The zones the engine syncs (``SyncConfiguration/zones``).
    ///   - indexes: The store's indexes (``QueryableModel/storeIndexes``): the fields screens filter and sort on,
    ///     which get the same indexes in CloudKit, so a client querying the server (a web client over Web
    ///     Services, a public database) can ask what the app's screens ask.
    ///   - queries: Queries the app runs against CloudKit itself.
    /// - Throws: `CloudSchemaError`, as `CloudSchema.init(models:samples:queries:encoder:)` does; for an
    ///   index or a zone's record type that no model has, `CloudSchemaError.Code.unknownField`.
    public init(
        syncing models: [any CKCodable.Type], samples: [any CKEncodable] = [], zones: [SyncZone] = [],
        indexes: [StoreIndex] = [], queries: [CloudQuery] = []
    ) throws(CloudSchemaError) {
        try self.init(models: models, samples: samples, queries: queries)
        for name in recordTypes.keys where name != CloudSchema.usersRecordType.name {
            try recordTypes[name]?.add(SyncMetadataFields.editTime, Field(FieldType(.int64)))
            try recordTypes[name]?.add(SyncMetadataFields.fieldEditTimes, Field(FieldType(.string)))
        }
        for zone in zones where !zone.hasChangeTokens {
            for recordType in zone.recordTypes {
                try addIndexes(
                    for: CloudQuery(
                        recordType: recordType, predicate: .modified(after: .distantPast),
                        sortDescriptors: [CloudQuery.SortDescriptor(.modificationDate)]))
                try addIndexes(for: CloudQuery(recordType: recordType))
            }
        }
        for index in indexes {
            guard var type = recordTypes[index.recordType] else {
                throw .unknownField(recordType: index.recordType, field: index.name, known: [])
            }
            for column in index.columns {
                let name: String
                switch column.key {
                case .field(let field): name = field
                case .creationDate: name = RecordType.systemFieldName(.creationDate)
                case .modificationDate: name = RecordType.systemFieldName(.modificationDate)
                case .recordName: name = RecordType.systemFieldName(.recordName)
                }
                guard var field = type[field: name] else {
                    throw .unknownField(recordType: index.recordType, field: name, known: Array(type.userFields.keys))
                }
                // Filtered with equals, ranges or prefixes and sorted, as the store's index serves: what CloudKit
                // allows of it (an encrypted field, which the store indexes on the device, gets none).
                field.indexes.formUnion(Indexes([.queryable, .sortable]).intersection(field.type.allowedIndexes))
                type[field: name] = field
            }
            recordTypes[index.recordType] = type
        }
    }
}
