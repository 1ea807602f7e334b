import Foundation
import NestedCloudKitCodable
import NestedCloudKitSync

/// A model with a field of every kind a query compares: strings, booleans, integers, doubles, optional dates,
/// lists and a reference.
struct Chore: CKCodable, Identifiable, Equatable, Sendable, QueryableModel {
    var id: String
    var title: String
    var isDone: Bool = false
    var priority: Int = 0
    var score: Double = 0
    var due: Date? = nil
    var tags: [String] = []
    var project: CloudLazyReference<Project>? = nil

    enum CodingKeys: String, CodingKey { case id, title, isDone, priority, score, due, tags, project }

    static let storeIndexes = [
        StoreIndex(Chore.self, on: [.key(.isDone)], sortedBy: [.descending(.priority)], named: "openByPriority"),
        StoreIndex(Chore.self, on: [.key(.isDone), .creationDate]),
    ]
}

struct Project: CKCodable, Identifiable, Equatable, Sendable {
    var id: String
    var name: String
}

/// A model that carries its system fields: a save of a copy read earlier merges against the version it was read
/// at.
struct Card: CKCodable, Identifiable, Sendable, QueryableModel {
    var id: String
    var front: String
    var back: String
    var systemFields: CloudRecord.SystemFields?

    enum CodingKeys: String, CodingKey { case id, front, back, systemFields }
}

/// A list and its entries, each entry referenced by the list: the graph a screen reads.
struct Shelf: CKCodable, Identifiable, Equatable, Sendable, QueryableModel {
    var id: String
    var name: String
    var books: [Book]

    enum CodingKeys: String, CodingKey { case id, name, books }
}

struct Book: CKCodable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
}

/// A model that isn't `Equatable`, so an observation of it can't drop equal results: what it delivers is what
/// the store's transactions caused.
struct Memo: CKCodable, Identifiable, Sendable, QueryableModel {
    var id: String
    var text: String

    enum CodingKeys: String, CodingKey { case id, text }
}
