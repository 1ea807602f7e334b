import Foundation
import NestedCloudKitCodable

/// A flat model: one record.
struct Note: CKCodable, Identifiable, Hashable, Sendable {
    var id: String
    var title: String
    var body: String
    var pinned: Bool = false
}

/// A graph: a school references its director (`.validate`, so the director must be on the server first) and its
/// students.
struct School: CKCodable, Identifiable, Equatable, Sendable {
    var id: String
    var name: String
    var director: Person
    var students: [Person]

    static let cloudKitFieldOptions = CloudFieldOptions(
        keyedBy: CodingKeys.self, referenceActions: [.director: .validate, .students: .validate])
}

struct Person: CKCodable, Identifiable, Equatable, Sendable {
    var id: String
    var name: String
}

/// A model with a file: a file URL is stored as an asset.
struct Photo: CKCodable, Identifiable, Equatable, Sendable {
    var id: String
    var caption: String
    var image: URL
}

/// A folder its items live and die with: each item holds a `.deleteSelf` reference to it, so deleting the folder on
/// the server deletes its items.
struct Folder: CKCodable, Identifiable, Equatable, Sendable {
    var id: String
    var name: String
}

struct Item: CKCodable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var folder: CloudLazyReference<Folder>

    static let cloudKitFieldOptions = CloudFieldOptions(
        keyedBy: CodingKeys.self, referenceActions: [.folder: .deleteSelf])
}
