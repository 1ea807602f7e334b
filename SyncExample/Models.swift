import NestedCloudKitCodable

/// A shopping list and its items: each item a record of its own, referenced from the list.
struct ShoppingList: CKCodable, Identifiable, Equatable {
    var id: String
    var title: String
    var items: [Item]
}

struct Item: CKCodable, Identifiable, Equatable {
    var id: String
    var text: String
    var done: Bool
}
