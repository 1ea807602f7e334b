import Foundation
import NestedCloudKitCodable

// The 1.0 School example: a school with a location, students, a director who is a person with a picture, and
// books, with the portable CloudLocation in place of CLLocation.

package struct Person: CKCodable, Identifiable, Equatable, Sendable {
    package var id: String
    package var name: String
    package var birthDate: Date
    package var picture: Data?
    package var cloudKitRecordType: String { "Person" }

    package init(id: String, name: String, birthDate: Date, picture: Data? = nil) {
        self.id = id
        self.name = name
        self.birthDate = birthDate
        self.picture = picture
    }
}

package struct Book: CKCodable, Identifiable, Equatable, Sendable {
    package var id: String
    package var title: String
    package var pages: Int
    package var available: Bool

    package init(id: String, title: String, pages: Int, available: Bool) {
        self.id = id
        self.title = title
        self.pages = pages
        self.available = available
    }
}

package struct School: CKCodable, Identifiable, Equatable, Sendable {
    package var id: String
    package var name: String
    package var location: CloudLocation
    package var students: [Person]
    package var director: Person
    package var books: [Book]

    package init(
        id: String, name: String, location: CloudLocation, students: [Person], director: Person, books: [Book]
    ) {
        self.id = id
        self.name = name
        self.location = location
        self.students = students
        self.director = director
        self.books = books
    }

    // The school can't exist without its director, and the director can't be deleted while it does. (Not
    // `.deleteSelf` on the children: that would delete the school when one student is deleted.)
    package func cloudKitReferenceActions() -> [String: CloudReference.Action] {
        ["director": .validate]
    }
}

extension School {
    package static let example = School(
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
