import Foundation
import NestedCloudKitCodable
import NestedCloudKitMacros

// The 1.0 School example: a school with a location, students, a director who is a person with a picture, and
// books. Each model keeps its record's system fields, so that saving it again updates the server's record.
// `@CloudRecord` maps each to its record without Codable; the records are the same.

@CloudRecord
struct Person: CKCodable, Identifiable {
    var id: String
    var name: String
    var birthDate: Date
    var picture: Data?
    var systemFields: CloudRecord.SystemFields?
}

@CloudRecord
struct Book: CKCodable, Identifiable {
    var id: String
    var title: String
    var pages: Int
    var available: Bool
    var systemFields: CloudRecord.SystemFields?
}

@CloudRecord
struct School: CKCodable, Identifiable {
    var id: String
    var name: String
    var location: CloudLocation
    // The school can't be saved without its director, and the director can't be deleted while the school
    // points to it. Students and books are plain links (the default, `.none`).
    @CloudField(reference: .validate) var director: Person
    var students: [Person]
    var books: [Book]
    var visits: Int
    var systemFields: CloudRecord.SystemFields?
}

extension School {
    static let exampleID = "springfield-elementary"

    /// The school the first run saves.
    static let example = School(
        id: exampleID,
        name: "Springfield Elementary",
        location: CloudLocation(latitude: 44.0462, longitude: -123.0220),
        director: Person(
            id: "seymour-skinner", name: "Seymour Skinner", birthDate: date("1953-10-31"),
            picture: Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0x2A, count: 24))
        ),
        students: [
            Person(id: "bart-simpson", name: "Bart Simpson", birthDate: date("1980-04-01")),
            Person(id: "lisa-simpson", name: "Lisa Simpson", birthDate: date("1982-05-09")),
            Person(id: "milhouse-van-houten", name: "Milhouse Van Houten", birthDate: date("1980-06-12")),
        ],
        books: [
            Book(id: "sicp", title: "Structure and Interpretation of Computer Programs", pages: 657, available: true),
            Book(id: "taocp-1", title: "The Art of Computer Programming, Volume 1", pages: 672, available: false),
        ],
        visits: 1
    )

    private static func date(_ day: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        // The literals above are valid dates; the fallback only keeps this free of force unwraps.
        return formatter.date(from: day) ?? Date(timeIntervalSince1970: 0)
    }
}
