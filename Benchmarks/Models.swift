import Foundation
import NestedCloudKitCodable

/// A struct with 20 fields of mixed types: the `encode.flat` and `decode.flat` workload.
struct Flat: CKCodable, Identifiable, Equatable {
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

    static func make(_ index: Int) -> Flat {
        Flat(
            id: "flat-\(index)", title: "Title \(index)", subtitle: "A subtitle", author: "Author \(index % 97)",
            publisher: "Publisher", pages: 100 + index % 900, edition: index % 7, copies: index * 3,
            year: 1900 + index % 120,
            price: Double(index % 1000) / 10, weight: 0.5, rating: 4.25, discount: 0.1, available: index % 2 == 0,
            featured: index % 5 == 0, published: Date(timeIntervalSince1970: Double(index) * 86_400),
            updated: Date(timeIntervalSince1970: 1_700_000_000),
            cover: Data([0x89, 0x50, 0x4E, 0x47, UInt8(index % 256)]),
            tags: ["fiction", "tag\(index % 10)"], note: index % 3 == 0 ? nil : "note"
        )
    }

    /// The same record the encoder makes, built by hand: the baseline for the mapping's overhead.
    func makeRecord(zoneID: CloudRecord.ZoneID = .default) -> CloudRecord {
        var record = CloudRecord(recordType: "Flat", id: CloudRecord.ID(recordName: id, zoneID: zoneID))
        record.fields.reserveCapacity(20)
        record["id"] = .string(id)
        record["title"] = .string(title)
        record["subtitle"] = .string(subtitle)
        record["author"] = .string(author)
        record["publisher"] = .string(publisher)
        record["pages"] = .int64(Int64(pages))
        record["edition"] = .int64(Int64(edition))
        record["copies"] = .int64(Int64(copies))
        record["year"] = .int64(Int64(year))
        record["price"] = .double(price)
        record["weight"] = .double(weight)
        record["rating"] = .double(rating)
        record["discount"] = .double(discount)
        record["available"] = .int64(available ? 1 : 0)
        record["featured"] = .int64(featured ? 1 : 0)
        record["published"] = .date(CloudValue.normalizedDate(published))
        record["updated"] = .date(CloudValue.normalizedDate(updated))
        record["cover"] = .bytes(cover)
        record["tags"] = .stringList(tags)
        if let note { record["note"] = .string(note) }
        return record
    }

    /// The value read back from its record by hand: the baseline for decoding.
    init?(record: CloudRecord) {
        guard case .string(let id)? = record["id"], case .string(let title)? = record["title"],
            case .string(let subtitle)? = record["subtitle"], case .string(let author)? = record["author"],
            case .string(let publisher)? = record["publisher"], case .int64(let pages)? = record["pages"],
            case .int64(let edition)? = record["edition"], case .int64(let copies)? = record["copies"],
            case .int64(let year)? = record["year"], case .double(let price)? = record["price"],
            case .double(let weight)? = record["weight"], case .double(let rating)? = record["rating"],
            case .double(let discount)? = record["discount"], case .int64(let available)? = record["available"],
            case .int64(let featured)? = record["featured"], case .date(let published)? = record["published"],
            case .date(let updated)? = record["updated"], case .bytes(let cover)? = record["cover"],
            case .stringList(let tags)? = record["tags"]
        else { return nil }
        var note: String?
        if case .string(let value)? = record["note"] { note = value }
        self.init(
            id: id, title: title, subtitle: subtitle, author: author, publisher: publisher, pages: Int(pages),
            edition: Int(edition), copies: Int(copies), year: Int(year), price: price, weight: weight, rating: rating,
            discount: discount, available: available == 1, featured: featured == 1, published: published,
            updated: updated, cover: cover, tags: tags, note: note)
    }

    init(
        id: String, title: String, subtitle: String, author: String, publisher: String, pages: Int, edition: Int,
        copies: Int, year: Int, price: Double, weight: Double, rating: Double, discount: Double, available: Bool,
        featured: Bool, published: Date, updated: Date, cover: Data, tags: [String], note: String?
    ) {
        self.id = id; self.title = title; self.subtitle = subtitle; self.author = author; self.publisher = publisher
        self.pages = pages; self.edition = edition; self.copies = copies; self.year = year; self.price = price
        self.weight = weight; self.rating = rating; self.discount = discount; self.available = available
        self.featured = featured; self.published = published; self.updated = updated; self.cover = cover
        self.tags = tags; self.note = note
    }
}

/// The `encode.graph` and `decode.graph` workload: a school with its director, students and books.
struct Student: CKCodable, Identifiable, Equatable {
    var id: String
    var name: String
    var birthDate: Date
    var grade: Int
}

struct Volume: CKCodable, Identifiable, Equatable {
    var id: String
    var title: String
    var pages: Int
    var available: Bool
}

struct Campus: CKCodable, Identifiable, Equatable {
    var id: String
    var name: String
    var location: CloudLocation
    var director: Student
    var students: [Student]
    var books: [Volume]

    static func make(students: Int, books: Int) -> Campus {
        Campus(
            id: "campus", name: "Springfield Elementary", location: CloudLocation(latitude: 44.05, longitude: -123.02),
            director: Student(
                id: "director", name: "Seymour Skinner", birthDate: Date(timeIntervalSince1970: 0), grade: 0),
            students: (0..<students).map {
                Student(
                    id: "student-\($0)", name: "Student \($0)",
                    birthDate: Date(timeIntervalSince1970: Double($0) * 86_400), grade: $0 % 12)
            },
            books: (0..<books).map {
                Volume(id: "book-\($0)", title: "Book \($0)", pages: 100 + $0 % 500, available: $0 % 2 == 0)
            }
        )
    }

    /// The records the encoder makes, built by hand.
    func makeRecords() -> [CloudRecord] {
        func person(_ student: Student) -> CloudRecord {
            CloudRecord(
                recordType: "Student", id: CloudRecord.ID(recordName: student.id),
                fields: [
                    "id": .string(student.id), "name": .string(student.name),
                    "birthDate": .date(CloudValue.normalizedDate(student.birthDate)),
                    "grade": .int64(Int64(student.grade)),
                ])
        }
        var records = [person(director)] + students.map(person)
        records += books.map { book in
            CloudRecord(
                recordType: "Volume", id: CloudRecord.ID(recordName: book.id),
                fields: [
                    "id": .string(book.id), "title": .string(book.title), "pages": .int64(Int64(book.pages)),
                    "available": .int64(book.available ? 1 : 0),
                ])
        }
        records.append(
            CloudRecord(
                recordType: "Campus", id: CloudRecord.ID(recordName: id),
                fields: [
                    "id": .string(id), "name": .string(name), "location": .location(location),
                    "director": .reference(CloudReference(recordID: CloudRecord.ID(recordName: director.id))),
                    "students": .referenceList(
                        students.map { CloudReference(recordID: CloudRecord.ID(recordName: $0.id)) }),
                    "books": .referenceList(books.map { CloudReference(recordID: CloudRecord.ID(recordName: $0.id)) }),
                ]))
        return records
    }

    /// The value read back from its records by hand.
    static func read(from records: [CloudRecord.ID: CloudRecord], root: CloudRecord) -> Campus? {
        func student(_ id: CloudRecord.ID) -> Student? {
            guard let record = records[id], case .string(let name)? = record["name"],
                case .date(let birth)? = record["birthDate"],
                case .int64(let grade)? = record["grade"]
            else { return nil }
            return Student(id: id.recordName, name: name, birthDate: birth, grade: Int(grade))
        }
        func volume(_ id: CloudRecord.ID) -> Volume? {
            guard let record = records[id], case .string(let title)? = record["title"],
                case .int64(let pages)? = record["pages"],
                case .int64(let available)? = record["available"]
            else { return nil }
            return Volume(id: id.recordName, title: title, pages: Int(pages), available: available == 1)
        }
        guard case .string(let name)? = root["name"], case .location(let location)? = root["location"],
            case .reference(let director)? = root["director"], case .referenceList(let students)? = root["students"],
            case .referenceList(let books)? = root["books"], let head = student(director.recordID)
        else { return nil }
        return Campus(
            id: root.id.recordName, name: name, location: location, director: head,
            students: students.compactMap { student($0.recordID) }, books: books.compactMap { volume($0.recordID) })
    }
}

/// A node of the `resolve.*` graphs: a chain, or a wide tree.
struct TreeNode: CKCodable, Identifiable, Equatable {
    var id: String
    var children: [TreeNode]

    static func chain(depth: Int) -> TreeNode {
        var node = TreeNode(id: "node-\(depth)", children: [])
        for level in stride(from: depth - 1, through: 0, by: -1) {
            node = TreeNode(id: "node-\(level)", children: [node])
        }
        return node
    }

    /// A tree whose levels below the root have the given fan-outs: [20, 20, 24] gives 20, 400 and 9,600 nodes.
    static func tree(fanOuts: [Int], prefix: String = "n") -> TreeNode {
        guard let fanOut = fanOuts.first else { return TreeNode(id: prefix, children: []) }
        return TreeNode(
            id: prefix,
            children: (0..<fanOut).map { tree(fanOuts: Array(fanOuts.dropFirst()), prefix: "\(prefix)-\($0)") })
    }
}
