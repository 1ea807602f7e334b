import Foundation
import NestedCloudKitCodable

// The 1.0 School example: a school with a location, students, a director who is a person with a picture, and
// books, with the portable CloudLocation in place of CLLocation.

struct Person: CKCodable, Identifiable, Equatable {
    var id: String
    var name: String
    var birthDate: Date
    var picture: Data?
    var cloudKitRecordType: String { "Person" }
}

struct Book: CKCodable, Identifiable, Equatable {
    var id: String
    var title: String
    var pages: Int
    var available: Bool
}

struct School: CKCodable, Identifiable, Equatable {
    var id: String
    var name: String
    var location: CloudLocation
    var students: [Person]
    var director: Person
    var books: [Book]

    // The school can't exist without its director, and the director can't be deleted while it does. (Not
    // `.deleteSelf` on the children: that would delete the school when one student is deleted.)
    func cloudKitReferenceActions() -> [String: CloudReference.Action] {
        ["director": .validate]
    }
}

extension School {
    static let example = School(
        id: "school-1",
        name: "Springfield Elementary",
        location: CloudLocation(latitude: -30.0346, longitude: -51.2177),
        students: [
            Person(id: "bart", name: "Bart", birthDate: .milliseconds(1_000_000_000_000)),
            Person(id: "lisa", name: "Lisa", birthDate: .milliseconds(1_100_000_000_000)),
        ],
        director: Person(
            id: "skinner", name: "Seymour Skinner", birthDate: .milliseconds(-100_000_000_000),
            picture: Data([0x89, 0x50, 0x4E, 0x47])
        ),
        books: [
            Book(id: "book-1", title: "The Art of Computer Programming", pages: 672, available: true),
            Book(id: "book-2", title: "Structure and Interpretation", pages: 657, available: false),
        ]
    )
}
