import NestedCloudKitCodable
import NestedCloudKitMacros
import NestedCloudKitSync

/// A shopping list and its items: each item a record of its own, referenced from the list. `@CloudRecord` maps both
/// to their records without Codable, for the store's saves and reads.
@CloudRecord
struct ShoppingList: CKCodable, Identifiable, Equatable {
    var id: String
    var title: String
    var items: [Item]
}

/// An item, queryable by its fields: a screen lists the open ones, newest first, on a declared index.
@CloudRecord
struct Item: CKCodable, Identifiable, Equatable, QueryableModel {
    var id: String
    var text: String
    var done: Bool

    enum CodingKeys: String, CodingKey { case id, text, done }

    static let storeIndexes = [StoreIndex(Item.self, on: [.key(.done), .creationDate])]
}
