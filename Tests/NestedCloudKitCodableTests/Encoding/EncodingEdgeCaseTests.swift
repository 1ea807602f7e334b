import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// Inputs that once gave wrong, unstable or lost data; each stays fixed.
@Suite("Encoding edge cases")
struct EncodingEdgeCaseTests {
    enum Weekday: String, Codable { case mon, tue }

    struct Schedule: CKEncodable {
        var cloudKitIdentifier: String { "s" }
        var ratios: [Double: Double]
        var hours: [Weekday: Int]
    }

    @Test func dictionaryWithNonStringKeysKeepsEachValueWithItsKey() throws {
        // Such dictionaries encode as key, value, key, value: sorting must move pairs, never single elements.
        try expectFields(
            of: Schedule(ratios: [2.5: 0.5, 1.5: 10], hours: [.tue: 8, .mon: 6]),
            equal: [
                "ratios": .string("[1.5,10.0,2.5,0.5]"),
                "hours": .string(#"["mon",6,"tue",8]"#),
            ])
    }

    struct Optionals: CKEncodable {
        var cloudKitIdentifier: String { "o" }
        var scores: [Int?]
    }

    @Test func arrayOfOptionalsIsJSONEvenWithoutANilSoItsFieldTypeNeverChanges() throws {
        try expectFields(of: Optionals(scores: [1, 2]), equal: ["scores": .string("[1,2]")])
        try expectFields(of: Optionals(scores: [1, nil]), equal: ["scores": .string("[1,null]")])
    }

    struct Scratch: CKEncodable {
        var cloudKitIdentifier: String { "scratch" }
        var kept = 1
        var ratio = Double.nan
        var huge = UInt64.max
        func ignoredProperties() -> [String] { ["ratio", "huge"] }
    }

    @Test func ignoredPropertiesAreNotValidated() throws {
        try expectFields(of: Scratch(), equal: ["kept": .int64(1)])
    }

    struct Person: CKEncodable, Identifiable { var id: String }

    struct Story: CKEncodable {
        var cloudKitIdentifier: String { "story" }
        var author: Person
        var draft: [Person]
        enum CodingKeys: CodingKey { case author, draft }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(Person(id: "anonymous"), forKey: .author)
            try container.encode(author, forKey: .author)
            var draft = container.nestedUnkeyedContainer(forKey: .draft)
            for person in self.draft { try draft.encode(person) }
        }
        func ignoredProperties() -> [String] { ["draft"] }
    }

    @Test func overwrittenOrIgnoredFieldsDoNotProduceRecords() throws {
        let records = try records(of: Story(author: Person(id: "ann"), draft: [Person(id: "ghost")]))
        #expect(records.map(\.id.recordName) == ["ann", "story"])
    }

    struct Address: Codable {
        var city: String
        var zip: String?
    }

    struct Home: CKEncodable {
        var cloudKitIdentifier: String { "home" }
        var address: Address
        var systemFields: CloudRecord.SystemFields?
    }

    @Test func flattenedNilClearsItsFieldOnARecordThatExists() throws {
        var encoder = CKRecordEncoder()
        encoder.nestedValueEncodingStrategy = .flattened(separator: "_")
        let home = Home(
            address: Address(city: "Paris", zip: nil), systemFields: CloudRecord.SystemFields(changeTag: "t"))
        let root = try #require(try records(of: home, with: encoder).last)
        #expect(root.fields == ["address_city": .string("Paris")])
        #expect(root.clearedFieldNames == ["address_zip"])
        // Embedded JSON leaves the nil out, as JSONEncoder does.
        #expect(try records(of: home).last?["address"] == .string(#"{"city":"Paris"}"#))
    }

    struct Shadowed: CKEncodable {
        var cloudKitIdentifier: String { "shadowed" }
        var address_city: String?
        var address: Address
    }

    @Test func nilFieldAndFlattenedFieldWithOneNameIsAnError() throws {
        var encoder = CKRecordEncoder()
        encoder.nestedValueEncodingStrategy = .flattened(separator: "_")
        let error = try encodingError(of: Shadowed(address: Address(city: "Rome")), with: encoder)
        #expect(error.code == .duplicateFieldName)
    }

    struct Moment: CKEncodable {
        var cloudKitIdentifier: String { "moment" }
        var at: Date
    }

    // Seconds since 1970, not dates: Foundation's `Date.description` traps on a NaN date, and the test's
    // arguments are described.
    @Test(arguments: [Double.nan, 1e13, -.infinity])
    func dateCloudKitCannotStoreIsAnError(secondsSince1970: Double) throws {
        let date = Date(timeIntervalSince1970: secondsSince1970)
        let error = try encodingError(of: Moment(at: date))
        #expect(error.code == .dateOutOfRange)
        #expect(error.path == ["at"])
        #expect(error.field == "at")
    }

    struct Spot: CKEncodable {
        var cloudKitIdentifier: String { "spot" }
        var location: CloudLocation
    }

    @Test func locationWithANonFinitePartIsAnErrorNamingThePart() throws {
        let error = try encodingError(of: Spot(location: CloudLocation(latitude: 1, longitude: .nan)))
        #expect(error.code == .nonFiniteNumber)
        #expect(error.path == ["location", "longitude"])
    }

    @Test func locationTimestampKeepsWholeMilliseconds() throws {
        let location = CloudLocation(latitude: 1, longitude: 2, timestamp: Date(timeIntervalSince1970: 1.2345))
        let root = try #require(try records(of: Spot(location: location)).last)
        #expect(root["location"] == .location(CloudLocation(latitude: 1, longitude: 2, timestamp: .milliseconds(1234))))
    }

    struct Places: CKEncodable {
        var cloudKitIdentifier: String { "places" }
        var seen: Set<CloudLocation>
        var links: Set<CloudReference>
    }

    @Test func setsWhoseElementsDifferOnlyInLesserPartsStillSortTheSameEveryTime() throws {
        let first = try records(of: Self.places())
        for _ in 0..<10 { #expect(try records(of: Self.places()) == first) }
        #expect(
            first.last?["links"]
                == .referenceList([
                    CloudReference(recordID: CloudRecord.ID(recordName: "a"), action: .deleteSelf),
                    CloudReference(recordID: CloudRecord.ID(recordName: "a"), action: .none),
                ]))
    }

    static func places() -> Places {
        Places(
            seen: Set((0..<20).map { CloudLocation(latitude: 1, longitude: 1, timestamp: .milliseconds(Int64($0))) }),
            links: [
                CloudReference(recordID: CloudRecord.ID(recordName: "a"), action: .none),
                CloudReference(recordID: CloudRecord.ID(recordName: "a"), action: .deleteSelf),
            ]
        )
    }

    struct Links: CKEncodable {
        var cloudKitIdentifier: String { "links" }
        var urls: [URL]
    }

    @Test func listMixingFileAndWebURLsIsAnError() throws {
        let error = try encodingError(
            of: Links(urls: [URL(fileURLWithPath: "/tmp/a"), URL(string: "https://b.example")!]))
        #expect(error.code == .mixedURLList)
        #expect(error.path == ["urls"])
    }

    struct Keys: CKEncodable {
        var cloudKitIdentifier: String { "keys" }
        var map: [String: Int]
    }

    @Test func embeddedJSONSortsKeysByTheirBytesOnEveryPlatform() throws {
        try expectFields(
            of: Keys(map: ["a": 1, "B": 2, "é": 3, "10": 4, "9": 5]),
            equal: ["map": .string(#"{"10":4,"9":5,"B":2,"a":1,"é":3}"#)])
    }

    struct Pointer: CKEncodable {
        var cloudKitIdentifier: String { "pointer" }
        var target: CloudReference
    }

    @Test func referencePropertyIsPlacedInTheEncodersZone() throws {
        let zone = CloudRecord.ZoneID(zoneName: "Z")
        let pointer = Pointer(target: CloudReference(recordID: CloudRecord.ID(recordName: "t"), action: .validate))
        let root = try #require(try CKRecordEncoder(zoneID: zone).encode(pointer).last)
        #expect(
            root["target"]
                == .reference(
                    CloudReference(recordID: CloudRecord.ID(recordName: "t", zoneID: zone), action: .validate)))
    }

    final class Teacher: CKEncodable, Identifiable {
        var name = "Edna"
    }

    @Test func classWithoutItsOwnIDIsRejectedInsteadOfGettingANameThatChangesEveryRun() throws {
        let error = try encodingError(of: Teacher())
        #expect(error.code == .invalidRecordName)
        #expect(error.reason.contains("ObjectIdentifier"))
    }

    struct Tagged: RawRepresentable, Codable, Hashable { var rawValue: String }
    struct Member: CKEncodable, Identifiable { var id: Tagged }

    @Test func identifierWithARawValueIsNamedByTheRawValue() throws {
        #expect(try records(of: Member(id: Tagged(rawValue: "m-1"))).last?.id.recordName == "m-1")
    }

    struct Reader: CKEncodable, Identifiable { var id: Int }
    struct Novel: CKEncodable, Identifiable { var id: Int; var reader: Reader }

    @Test func integerIDsSharedAcrossTypesAreAConflictThatSaysHowToFixIt() throws {
        let error = try encodingError(of: Novel(id: 1, reader: Reader(id: 1)))
        #expect(error.code == .conflictingRecordID)
        #expect(error.reason.hasPrefix("A Novel and a Reader have the record ID 1"))
        #expect(error.recoverySuggestion?.contains("Person-1") == true)
    }

    struct Layer: CKEncodable, Identifiable {
        var id: Int
        var below: [Layer]
    }

    @Test func sharedStructsAtEveryLevelEncodeInLinearTime() throws {
        // 41 distinct records reached 2^40 times: checking every copy again would never finish.
        var layer = Layer(id: 0, below: [])
        for id in 1...40 { layer = Layer(id: id, below: [layer, layer]) }
        let records = try records(of: layer)
        #expect(records.count == 41)
    }

    struct Order: CKEncodable, Identifiable {
        var id: String
        var customer: Customer
    }

    struct Customer: CKEncodable, Identifiable {
        var id: String
        var name: String
    }

    struct Ledger: CKEncodable, Identifiable {
        var id: String
        var orders: [Order]
    }

    @Test func twoCopiesOfARecordThatDifferBelowItAreStillAConflict() throws {
        let old = Order(id: "o1", customer: Customer(id: "c1", name: "Old name"))
        var new = old
        new.customer.name = "New name"
        let error = try encodingError(of: Ledger(id: "l", orders: [old, new]))
        #expect(error.code == .conflictingRecordID)
    }
}
