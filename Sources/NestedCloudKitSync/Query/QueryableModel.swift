import NestedCloudKitCodable

/// A model the store can query by its fields: its `CodingKeys` name them, so a misspelt field doesn't compile.
///
/// Declare the coding keys (Swift's synthesized ones are private, which a query outside the type can't name),
/// and, optionally, the indexes the store keeps for the fields the app filters and sorts on:
///
/// ```swift
/// struct Note: CKCodable, Identifiable, QueryableModel {
///     var id: String
///     var title: String
///     var isDone: Bool
///     var due: Date?
///
///     enum CodingKeys: String, CodingKey { case id, title, isDone, due }
///
///     static let storeIndexes = [StoreIndex(Note.self, on: .isDone, .due)]
/// }
///
/// try await store.declareIndexes(for: [Note.self])
/// let open = try await store.fetch(
///     ModelQuery(Note.self).filter(.equals(.isDone, false)).sorted(by: .descending(.due)).limit(50))
/// ```
public protocol QueryableModel: CKDecodable, CKRecordRepresentable {
    /// The keys the model's fields are stored under: the record's field names.
    associatedtype CodingKeys: CodingKey

    /// The indexes the store keeps for this type (``SyncStore/declareIndexes(for:)``). Defaults to none.
    static var storeIndexes: [StoreIndex] { get }
}

extension QueryableModel {
    /// No indexes.
    public static var storeIndexes: [StoreIndex] { [] }
}
