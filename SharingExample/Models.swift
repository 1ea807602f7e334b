import NestedCloudKitCodable
import NestedCloudKitMacros

/// A shopping list: the root of what alice shares.
@CloudRecord
struct ShoppingList: CKCodable, Identifiable, Equatable {
    var id: String
    var title: String
}

/// An item of a list. Its record's parent is the list's (`@CloudField(parent: true)`): so a share of the list
/// covers it, items added later included, by either user.
@CloudRecord
struct Item: CKCodable, Identifiable, Equatable {
    var id: String
    var text: String
    var done: Bool
    @CloudField(parent: true) var list: CloudLazyReference<ShoppingList>
}
