import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// One test per row of the mapping table: each Swift value gives exactly the expected field.
@Suite("Value mapping")
struct ValueMappingTests {
    struct Strings: CKEncodable {
        var cloudKitIdentifier: String { "s" }
        var text: String
        var letter: Character
        var id: UUID
    }

    @Test func stringsCharactersAndUUIDsBecomeStrings() throws {
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        try expectFields(
            of: Strings(text: "héllo 👋", letter: "é", id: uuid),
            equal: [
                "text": .string("héllo 👋"), "letter": .string("é"),
                "id": .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
            ])
    }

    struct Integers: CKEncodable {
        var cloudKitIdentifier: String { "i" }
        var int = Int.min
        var int8 = Int8.min
        var int16 = Int16.max
        var int32 = Int32.min
        var int64 = Int64.max
        var uint = UInt(Int64.max)
        var uint8 = UInt8.max
        var uint16 = UInt16.max
        var uint32 = UInt32.max
        var uint64 = UInt64(Int64.max)
    }

    @Test func everyIntegerWidthBecomesInt64() throws {
        try expectFields(
            of: Integers(),
            equal: [
                "int": .int64(.min), "int8": .int64(-128), "int16": .int64(32767), "int32": .int64(-2_147_483_648),
                "int64": .int64(.max), "uint": .int64(.max), "uint8": .int64(255), "uint16": .int64(65535),
                "uint32": .int64(4_294_967_295), "uint64": .int64(.max),
            ])
    }

    @Test func unsignedIntegerAboveInt64MaxIsAnOverflowError() throws {
        let error = try encodingError(of: Integers(uint64: UInt64(Int64.max) + 1))
        #expect(error.code == .integerOverflow)
        #expect(error.path == ["uint64"])
        #expect(error.recordID == CloudRecord.ID(recordName: "i"))
        #expect(error.field == "uint64")

        let uintError = try encodingError(of: Integers(uint: .max))
        #expect(uintError.code == .integerOverflow)
        #expect(uintError.path == ["uint"])
    }

    struct Flags: CKEncodable {
        var cloudKitIdentifier: String { "f" }
        var on: Bool
        var off: Bool
    }

    @Test func boolBecomesZeroOrOne() throws {
        try expectFields(of: Flags(on: true, off: false), equal: ["on": .int64(1), "off": .int64(0)])
    }

    struct Numbers: CKEncodable {
        var cloudKitIdentifier: String { "n" }
        var double: Double
        var float: Float
    }

    @Test func doubleAndFloatBecomeDoubles() throws {
        try expectFields(of: Numbers(double: 0.1, float: 0.5), equal: ["double": .double(0.1), "float": .double(0.5)])
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteNumberIsAnErrorByDefault(value: Double) throws {
        let error = try encodingError(of: Numbers(double: value, float: 1))
        #expect(error.code == .nonFiniteNumber)
        #expect(error.path == ["double"])
        #expect(error.field == "double")
        #expect(error.recordID == CloudRecord.ID(recordName: "n"))

        let floatError = try encodingError(of: Numbers(double: 1, float: Float(value)))
        #expect(floatError.path == ["float"])
    }

    @Test func nonFiniteNumberBecomesAStringWhenTheStrategySaysSo() throws {
        var encoder = CKRecordEncoder()
        encoder.nonFiniteFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        try expectFields(
            of: Numbers(double: .nan, float: -.infinity), with: encoder,
            equal: [
                "double": .string("nan"), "float": .string("-inf"),
            ])
    }

    struct Money: CKEncodable {
        var cloudKitIdentifier: String { "m" }
        var amount: Decimal
    }

    @Test func decimalBecomesItsExactTextByDefault() throws {
        let amount = try #require(Decimal(string: "12345678901234567890.123456789"))
        try expectFields(of: Money(amount: amount), equal: ["amount": .string("12345678901234567890.123456789")])
    }

    @Test func decimalBecomesADoubleWhenTheStrategySaysSo() throws {
        var encoder = CKRecordEncoder()
        encoder.decimalEncodingStrategy = .double
        try expectFields(of: Money(amount: Decimal(string: "2.5")!), with: encoder, equal: ["amount": .double(2.5)])
    }

    struct Event: CKEncodable {
        var cloudKitIdentifier: String { "e" }
        var date: Date
    }

    @Test func dateKeepsWholeMillisecondsAsCloudKitDoes() throws {
        try expectFields(
            of: Event(date: Date(timeIntervalSince1970: 1_700_000_000.123_456)),
            equal: ["date": .date(.milliseconds(1_700_000_000_123))])
        // Before 1970 the truncation still goes toward the past, as a millisecond count does.
        try expectFields(
            of: Event(date: Date(timeIntervalSince1970: -1.000_5)),
            equal: ["date": .date(.milliseconds(-1001))])
    }

    struct Blob: CKEncodable {
        var cloudKitIdentifier: String { "b" }
        var data: Data
    }

    @Test func dataBecomesBytesByDefaultWhateverItsSize() throws {
        // A field's CloudKit type is fixed when it is first saved, so size alone must not switch it to an asset.
        let large = Data(repeating: 2, count: 300 * 1024)
        try expectFields(of: Blob(data: large), equal: ["data": .bytes(large)])
    }

    @Test(arguments: [
        (CKRecordEncoder.DataEncodingStrategy.bytes, false),
        (.asset, true),
        (.assets(forFields: ["data"]), true),
        (.assets(forFields: ["other"]), false),
        (.automatic(assetThreshold: 2), true),
        (.automatic(assetThreshold: 3), false),
    ])
    func dataStrategyChoosesBytesOrAsset(strategy: CKRecordEncoder.DataEncodingStrategy, isAsset: Bool) throws {
        var encoder = CKRecordEncoder()
        encoder.dataEncodingStrategy = strategy
        let data = Data([1, 2, 3])
        try expectFields(
            of: Blob(data: data), with: encoder,
            equal: ["data": isAsset ? .asset(CloudAsset(data: data)) : .bytes(data)])
    }

    struct Links: CKEncodable {
        var cloudKitIdentifier: String { "l" }
        var file: URL
        var web: URL
    }

    @Test func fileURLBecomesAnAssetAndOtherURLsStrings() throws {
        let file = URL(fileURLWithPath: "/tmp/photo.jpg")
        try expectFields(
            of: Links(file: file, web: URL(string: "https://example.com/a?b=c")!),
            equal: [
                "file": .asset(CloudAsset(fileURL: file)), "web": .string("https://example.com/a?b=c"),
            ])
    }

    struct Place: CKEncodable {
        var cloudKitIdentifier: String { "p" }
        var location: CloudLocation
    }

    @Test func cloudLocationBecomesALocation() throws {
        let location = CloudLocation(
            latitude: 1.5, longitude: -2.5, altitude: 10, horizontalAccuracy: 5,
            verticalAccuracy: 3, course: 90, speed: 1.2, timestamp: .milliseconds(42))
        try expectFields(of: Place(location: location), equal: ["location": .location(location)])
    }

    enum Color: String, Codable { case red, green }
    enum Level: Int, Codable { case low = 1, high = 9 }

    struct Enums: CKEncodable {
        var cloudKitIdentifier: String { "r" }
        var color: Color
        var level: Level
        var colors: [Color]
    }

    @Test func rawValueEnumsBecomeTheirRawValues() throws {
        try expectFields(
            of: Enums(color: .green, level: .high, colors: [.red, .green]),
            equal: [
                "color": .string("green"), "level": .int64(9), "colors": .stringList(["red", "green"]),
            ])
    }

    struct Stored: CKEncodable {
        var cloudKitIdentifier: String { "x" }
        var link: CloudReference
        var file: CloudAsset
    }

    @Test func cloudReferenceAndAssetPropertiesAreStoredAsTheyAre() throws {
        let link = CloudReference(recordID: CloudRecord.ID(recordName: "elsewhere"), action: .validate)
        let file = CloudAsset(fileURL: URL(fileURLWithPath: "/tmp/a"))
        try expectFields(of: Stored(link: link, file: file), equal: ["link": .reference(link), "file": .asset(file)])
    }
}
