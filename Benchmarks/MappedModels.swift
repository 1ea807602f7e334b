import Foundation
import NestedCloudKitCodable

// The benchmark's models again, with record mappings: the code the `@CloudRecord` macro generates, written out.
// Their record types are the Codable models' names, so that both give the same records, which the workloads check
// before timing them.

/// ``Flat`` with a record mapping: the `encode.flat.mapped` and `decode.flat.mapped` workload.
struct MappedFlat: CKCodable, CloudRecordMappable, Identifiable, Equatable {
    var id: String
    var title: String
    var subtitle: String
    var author: String
    var publisher: String
    var pages: Int
    var edition: Int
    var copies: Int
    var year: Int
    var price: Double
    var weight: Double
    var rating: Double
    var discount: Double
    var available: Bool
    var featured: Bool
    var published: Date
    var updated: Date
    var cover: Data
    var tags: [String]
    var note: String?

    var cloudKitRecordType: String { "Flat" }

    init(_ flat: Flat) {
        id = flat.id; title = flat.title; subtitle = flat.subtitle; author = flat.author; publisher = flat.publisher
        pages = flat.pages; edition = flat.edition; copies = flat.copies; year = flat.year; price = flat.price
        weight = flat.weight; rating = flat.rating; discount = flat.discount; available = flat.available
        featured = flat.featured; published = flat.published; updated = flat.updated; cover = flat.cover
        tags = flat.tags; note = flat.note
    }

    func encodeFields(to record: inout CloudRecordWriter) throws {
        try record.encode(id, forKey: "id")
        try record.encode(title, forKey: "title")
        try record.encode(subtitle, forKey: "subtitle")
        try record.encode(author, forKey: "author")
        try record.encode(publisher, forKey: "publisher")
        try record.encode(pages, forKey: "pages")
        try record.encode(edition, forKey: "edition")
        try record.encode(copies, forKey: "copies")
        try record.encode(year, forKey: "year")
        try record.encode(price, forKey: "price")
        try record.encode(weight, forKey: "weight")
        try record.encode(rating, forKey: "rating")
        try record.encode(discount, forKey: "discount")
        try record.encode(available, forKey: "available")
        try record.encode(featured, forKey: "featured")
        try record.encode(published, forKey: "published")
        try record.encode(updated, forKey: "updated")
        try record.encode(cover, forKey: "cover")
        try record.encode(tags, forKey: "tags")
        try record.encodeIfPresent(note, forKey: "note")
    }

    init(fields record: CloudRecordReader) throws {
        id = try record.decode(String.self, forKey: "id")
        title = try record.decode(String.self, forKey: "title")
        subtitle = try record.decode(String.self, forKey: "subtitle")
        author = try record.decode(String.self, forKey: "author")
        publisher = try record.decode(String.self, forKey: "publisher")
        pages = try record.decode(Int.self, forKey: "pages")
        edition = try record.decode(Int.self, forKey: "edition")
        copies = try record.decode(Int.self, forKey: "copies")
        year = try record.decode(Int.self, forKey: "year")
        price = try record.decode(Double.self, forKey: "price")
        weight = try record.decode(Double.self, forKey: "weight")
        rating = try record.decode(Double.self, forKey: "rating")
        discount = try record.decode(Double.self, forKey: "discount")
        available = try record.decode(Bool.self, forKey: "available")
        featured = try record.decode(Bool.self, forKey: "featured")
        published = try record.decode(Date.self, forKey: "published")
        updated = try record.decode(Date.self, forKey: "updated")
        cover = try record.decode(Data.self, forKey: "cover")
        tags = try record.decode([String].self, forKey: "tags")
        note = try record.decodeIfPresent(String.self, forKey: "note")
    }
}

/// ``Student`` with a record mapping.
struct MappedStudent: CKCodable, CloudRecordMappable, Identifiable, Equatable {
    var id: String
    var name: String
    var birthDate: Date
    var grade: Int

    var cloudKitRecordType: String { "Student" }

    init(_ student: Student) {
        id = student.id; name = student.name; birthDate = student.birthDate; grade = student.grade
    }

    func encodeFields(to record: inout CloudRecordWriter) throws {
        try record.encode(id, forKey: "id")
        try record.encode(name, forKey: "name")
        try record.encode(birthDate, forKey: "birthDate")
        try record.encode(grade, forKey: "grade")
    }

    init(fields record: CloudRecordReader) throws {
        id = try record.decode(String.self, forKey: "id")
        name = try record.decode(String.self, forKey: "name")
        birthDate = try record.decode(Date.self, forKey: "birthDate")
        grade = try record.decode(Int.self, forKey: "grade")
    }
}

/// ``Volume`` with a record mapping.
struct MappedVolume: CKCodable, CloudRecordMappable, Identifiable, Equatable {
    var id: String
    var title: String
    var pages: Int
    var available: Bool

    var cloudKitRecordType: String { "Volume" }

    init(_ volume: Volume) {
        id = volume.id; title = volume.title; pages = volume.pages; available = volume.available
    }

    func encodeFields(to record: inout CloudRecordWriter) throws {
        try record.encode(id, forKey: "id")
        try record.encode(title, forKey: "title")
        try record.encode(pages, forKey: "pages")
        try record.encode(available, forKey: "available")
    }

    init(fields record: CloudRecordReader) throws {
        id = try record.decode(String.self, forKey: "id")
        title = try record.decode(String.self, forKey: "title")
        pages = try record.decode(Int.self, forKey: "pages")
        available = try record.decode(Bool.self, forKey: "available")
    }
}

/// ``Campus`` with a record mapping: the `encode.graph.mapped` and `decode.graph.mapped` workload.
struct MappedCampus: CKCodable, CloudRecordMappable, Identifiable, Equatable {
    var id: String
    var name: String
    var location: CloudLocation
    var director: MappedStudent
    var students: [MappedStudent]
    var books: [MappedVolume]

    var cloudKitRecordType: String { "Campus" }

    init(_ campus: Campus) {
        id = campus.id; name = campus.name; location = campus.location
        director = MappedStudent(campus.director)
        students = campus.students.map(MappedStudent.init)
        books = campus.books.map(MappedVolume.init)
    }

    func encodeFields(to record: inout CloudRecordWriter) throws {
        try record.encode(id, forKey: "id")
        try record.encode(name, forKey: "name")
        try record.encode(location, forKey: "location")
        try record.encode(director, forKey: "director")
        try record.encode(students, forKey: "students")
        try record.encode(books, forKey: "books")
    }

    init(fields record: CloudRecordReader) throws {
        id = try record.decode(String.self, forKey: "id")
        name = try record.decode(String.self, forKey: "name")
        location = try record.decode(CloudLocation.self, forKey: "location")
        director = try record.decode(MappedStudent.self, forKey: "director")
        students = try record.decode([MappedStudent].self, forKey: "students")
        books = try record.decode([MappedVolume].self, forKey: "books")
    }
}
