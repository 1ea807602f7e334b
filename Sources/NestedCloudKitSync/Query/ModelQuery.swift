import NestedCloudKitCodable

/// A query of a store's models of one type: a filter, an order, a limit and an offset, run in SQLite.
///
/// ```swift
/// let newestOpen = ModelQuery(Note.self)
///     .filter(.equals(.isDone, false))
///     .sorted(by: .descending(.creationDate))
///     .limit(50)
/// let notes = try await store.fetch(newestOpen)
/// let count = try await store.count(newestOpen)
/// for try await notes in store.observe(newestOpen) { show(notes) }
/// ```
///
/// Without an order, models come by record name. Equal sort keys are ordered by record name too, so a page
/// boundary never moves between two runs over the same data.
public struct ModelQuery<Model: QueryableModel>: Sendable, Hashable {
    /// Which models; `nil` for every model of the type.
    public var filter: ModelFilter<Model>?
    /// The order, first key first.
    public var sortOrder: [ModelSort<Model>] = []
    /// At most this many models; `nil` for all.
    public var limit: Int?
    /// How many matching models to skip first.
    public var offset: Int = 0
    /// The zone; the store's ``SyncStore/zoneID`` if `nil`.
    public var zoneID: CloudRecord.ZoneID?
    /// The record type; the model type's name if `nil` (set it for a type that declares another
    /// `cloudKitRecordType`).
    public var recordType: String?

    /// Every model of the type, by record name.
    public init(_ type: Model.Type = Model.self) {}

    /// The query with another filter, combined with this one's by `&&`.
    public func filter(_ filter: ModelFilter<Model>) -> Self {
        var query = self
        query.filter = self.filter.map { $0 && filter } ?? filter
        return query
    }

    /// The query ordered by these keys, first key first (replacing any order it had).
    public func sorted(by keys: ModelSort<Model>...) -> Self {
        var query = self
        query.sortOrder = keys
        return query
    }

    /// The query returning at most `limit` models, after skipping `offset`.
    public func limit(_ limit: Int, offset: Int = 0) -> Self {
        var query = self
        query.limit = limit
        query.offset = offset
        return query
    }

    /// The query of another zone.
    public func inZone(_ zoneID: CloudRecord.ZoneID) -> Self {
        var query = self
        query.zoneID = zoneID
        return query
    }

    /// The query of records of another type than the model type's name.
    public func recordType(_ recordType: String) -> Self {
        var query = self
        query.recordType = recordType
        return query
    }
}

/// One key of a query's order.
public struct ModelSort<Model: QueryableModel>: Sendable, Hashable {
    let field: QueryField<Model>
    let descending: Bool

    /// Smallest first; records without the field first.
    public static func ascending(_ field: QueryField<Model>) -> Self { Self(field: field, descending: false) }
    /// Largest first; records without the field last.
    public static func descending(_ field: QueryField<Model>) -> Self { Self(field: field, descending: true) }
    /// Smallest first; records without the field first.
    public static func ascending(_ key: Model.CodingKeys) -> Self { ascending(.key(key)) }
    /// Largest first; records without the field last.
    public static func descending(_ key: Model.CodingKeys) -> Self { descending(.key(key)) }
}
