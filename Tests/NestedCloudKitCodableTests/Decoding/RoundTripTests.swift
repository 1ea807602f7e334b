import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// Every row of the mapping table and every encoder option, encoded, saved, fetched and decoded back.
@Suite("Round trips")
struct RoundTripTests {
    enum Color: String, Codable, Equatable { case red, green }
    enum Level: Int, Codable, Equatable { case low = 1, high = 9 }
    enum Shape: Codable, Equatable { case circle(radius: Double), square(side: Int) }

    struct Address: Codable, Equatable {
        var street: String
        var zip: String?
        var tags: [String]
    }

    struct Everything: CKCodable, Identifiable, Equatable {
        var id = "everything"
        var string = "héllo 👋"
        var int = Int.min
        var int8 = Int8.max
        var int16 = Int16.min
        var int32 = Int32.max
        var int64 = Int64.min
        var uint = UInt(Int64.max)
        var uint8 = UInt8.max
        var uint16 = UInt16.max
        var uint32 = UInt32.max
        var uint64 = UInt64(Int64.max)
        var bool = true
        var double = 0.1
        var float: Float = 0.3
        var decimal = Decimal(string: "12345678901234567890.123456789")!
        var date = Date.milliseconds(1_700_000_000_123)
        var data = Data([0, 1, 2, 255])
        var url = URL(string: "https://example.com/a?b=c")!
        var uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        var location = CloudLocation(
            latitude: 48.85, longitude: 2.35, altitude: 35, horizontalAccuracy: 5,
            verticalAccuracy: 3, course: 90, speed: 1.5, timestamp: .milliseconds(42))
        var color = Color.green
        var level = Level.high
        var strings = ["b", "a"]
        var ints = [3, -1, 0]
        var doubles = [1.5, -0.25]
        var bools = [true, false]
        var dates = [Date.milliseconds(1), .milliseconds(-2)]
        var datas = [Data([1]), Data()]
        var uuids = [UUID(uuidString: "00000000-0000-0000-0000-000000000001")!]
        var colors = [Color.red, .green]
        var locations = [CloudLocation(latitude: 1, longitude: 2)]
        var set: Set<String> = ["x", "y", "z"]
        var present: String? = "here"
        var absent: Int? = nil
        var emptyList: [Int] = []
        var emptySet: Set<String> = []
        var address = Address(street: "742 Evergreen", zip: nil, tags: ["home"])
        var noAddress: Address? = nil
        var dictionary = ["one": 1, "two": 2]
        var keyedByInt = [1: "one", 2: "two"]
        var keyedByDouble = [1.5: "a", 2.5: "b"]
        var shape = Shape.square(side: 4)
        var grid = [[1, 2], [3]]
        var optionals: [Int?] = [1, nil]
    }

    @Test func everyRowOfTheMappingTableRoundTrips() async throws {
        let (decoded, _) = try await roundTrip(Everything())
        #expect(decoded == Everything())
    }

    @Test func everyRowRoundTripsFromRecordsInHand() throws {
        let graph = try CKRecordEncoder().encodeGraph(Everything())
        #expect(try CKRecordDecoder().decode(Everything.self, from: graph) == Everything())
    }

    @Test func datesComeBackToTheMillisecond() async throws {
        var value = Everything()
        value.date = Date(timeIntervalSince1970: 1_700_000_000.123_789)
        let (decoded, _) = try await roundTrip(value)
        #expect(decoded.date == .milliseconds(1_700_000_000_123))
    }

    @Test(arguments: [
        CKRecordEncoder.DataEncodingStrategy.bytes, .asset, .assets(forFields: ["data"]), .automatic(assetThreshold: 2),
    ])
    func dataRoundTripsWithEveryStrategy(strategy: CKRecordEncoder.DataEncodingStrategy) async throws {
        var encoder = CKRecordEncoder()
        encoder.dataEncodingStrategy = strategy
        let (decoded, _) = try await roundTrip(Everything(), encoder: encoder)
        #expect(decoded == Everything())
    }

    @Test func flattenedNestedValuesRoundTrip() async throws {
        var encoder = CKRecordEncoder()
        encoder.nestedValueEncodingStrategy = .flattened(separator: "_")
        var decoder = CKRecordDecoder()
        decoder.nestedValueDecodingStrategy = .flattened(separator: "_")
        let (decoded, _) = try await roundTrip(Everything(), encoder: encoder, decoder: decoder)
        #expect(decoded == Everything())
    }

    @Test func decimalAsDoubleRoundTripsWhenItFitsADouble() async throws {
        var encoder = CKRecordEncoder()
        encoder.decimalEncodingStrategy = .double
        var value = Everything()
        value.decimal = Decimal(string: "2.5")!
        let (decoded, _) = try await roundTrip(value, encoder: encoder)
        #expect(decoded.decimal == Decimal(string: "2.5")!)
    }

    @Test func nonFiniteNumbersRoundTripAsStringsWhenBothSidesAgree() async throws {
        var encoder = CKRecordEncoder()
        encoder.nonFiniteFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        var decoder = CKRecordDecoder()
        decoder.nonFiniteFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        var value = Everything()
        value.double = .infinity
        value.float = -.infinity
        let (decoded, _) = try await roundTrip(value, encoder: encoder, decoder: decoder)
        #expect(decoded.double == .infinity)
        #expect(decoded.float == -.infinity)
    }

    struct Files: CKCodable, Identifiable, Equatable {
        var id = "files"
        var document: URL
        var attachments: [URL]
    }

    /// A saved file is copied, as CloudKit uploads it; the decoded URL is the database's copy, with the contents.
    @Test func fileURLsRoundTripAsAssets() async throws {
        let document = URL(fileURLWithPath: temporaryDatabasePath("doc"))
        let attachment = URL(fileURLWithPath: temporaryDatabasePath("a"))
        try Data("document".utf8).write(to: document)
        try Data("attachment".utf8).write(to: attachment)
        let (decoded, database) = try await roundTrip(Files(document: document, attachments: [attachment]))
        // The copies live as long as the database, as a CKDatabase's downloaded assets live in its cache.
        let documentContents = try withExtendedLifetime(database) { try Data(contentsOf: decoded.document) }
        let attachmentContents = try withExtendedLifetime(database) {
            try decoded.attachments.map { try Data(contentsOf: $0) }
        }
        #expect(documentContents == Data("document".utf8))
        #expect(attachmentContents == [Data("attachment".utf8)])
        #expect(decoded.document != document)
    }

    struct Pictured: CKCodable, Identifiable, Equatable {
        var id = "pictured"
        var picture: Data
    }

    @Test func assetStoredInAFileDecodesToItsContents() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("nckc-\(UUID().uuidString).bin")
        try Data([9, 8, 7]).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let record = CloudRecord(
            recordType: "Pictured", id: CloudRecord.ID(recordName: "pictured"),
            fields: [
                "id": .string("pictured"), "picture": .asset(CloudAsset(fileURL: file)),
            ])
        #expect(
            try CKRecordDecoder().decode(Pictured.self, from: record, records: [])
                == Pictured(picture: Data([9, 8, 7])))
    }

    @Test func theSchoolExampleRoundTripsInOneRequest() async throws {
        let (decoded, database) = try await roundTrip(School.example)
        #expect(decoded == School.example)
        let statistics = database.network.statistics
        #expect(statistics.fetchRequests == 1)
        #expect(statistics.recordsFetched == 5)
    }

    @Test func encodingIsDeterministicAfterARoundTrip() async throws {
        let (decoded, _) = try await roundTrip(Everything())
        #expect(try CKRecordEncoder().encode(decoded) == (try CKRecordEncoder().encode(Everything())))
    }

    @Test func customZoneRoundTrips() async throws {
        let (decoded, _) = try await roundTrip(
            School.example, encoder: CKRecordEncoder(zoneID: CloudRecord.ZoneID(zoneName: "Schools")))
        #expect(decoded == School.example)
    }
}
