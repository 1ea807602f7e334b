import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

/// Every way decoding fails is a thrown error with the case, the record and the coding path.
@Suite("Decoding errors")
struct DecodingErrorTests {
    struct Book: CKCodable, Identifiable, Equatable {
        var id: String
        var title: String
        var pages: Int
    }

    struct Shelf: CKCodable, Identifiable, Equatable {
        var id: String
        var favorite: Book
        var spare: Book?
        var books: [Book]
    }

    static let shelfID = CloudRecord.ID(recordName: "shelf")

    static func shelf(_ fields: CloudRecord.Fields) -> CloudRecord {
        CloudRecord(recordType: "Shelf", id: shelfID, fields: fields)
    }

    static func book(_ name: String, _ fields: CloudRecord.Fields = ["title": .string("T"), "pages": .int64(1)])
        -> CloudRecord
    {
        CloudRecord(recordType: "Book", id: CloudRecord.ID(recordName: name), fields: fields)
    }

    /// Decodes a shelf from a database holding the given records; returns the error.
    func decodingError(
        _ root: CloudRecord, in records: [CloudRecord], decoder: CKRecordDecoder = CKRecordDecoder(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> CKCodableError {
        let database = InMemoryCloudDatabase()
        try await database.saveRecords(records)
        return try await #require(throws: CKCodableError.self, sourceLocation: sourceLocation) {
            try await decoder.decode(Shelf.self, from: root, referenceDatabase: database)
        }
    }

    @Test func missingRequiredReferenceNamesRecordAndPath() async throws {
        let root = Self.shelf(["favorite": reference("gone"), "books": .referenceList([])])
        let error = try await decodingError(root, in: [])
        #expect(error.code == .missingRecord)
        #expect(error.referencedRecordID == CloudRecord.ID(recordName: "gone"))
        #expect(error.path == ["favorite"])
        #expect(error.recordID == Self.shelfID)
        #expect(error.field == "favorite")
    }

    @Test func missingOptionalReferenceIsNilByDefault() async throws {
        let root = Self.shelf(["favorite": reference("b1"), "spare": reference("gone")])
        let database = InMemoryCloudDatabase()
        try await database.saveRecords([Self.book("b1")])
        let shelf = try await CKRecordDecoder().decode(Shelf.self, from: root, referenceDatabase: database)
        #expect(shelf.spare == nil)
        #expect(shelf.favorite.id == "b1")
        #expect(shelf.books == [])  // a missing list is an empty one
    }

    @Test func missingOptionalReferenceIsAnErrorWhenAsked() async throws {
        var decoder = CKRecordDecoder()
        decoder.missingReferenceStrategy = .throw
        let root = Self.shelf(["favorite": reference("b1"), "spare": reference("gone")])
        let error = try await decodingError(root, in: [Self.book("b1")], decoder: decoder)
        #expect(error.code == .missingRecord)
        #expect(error.referencedRecordID == CloudRecord.ID(recordName: "gone"))
        #expect(error.path == ["spare"])
    }

    @Test func missingElementOfAReferenceListNamesItsIndex() async throws {
        let root = Self.shelf([
            "favorite": reference("b1"),
            "books": .referenceList([
                CloudReference(recordID: CloudRecord.ID(recordName: "b1")),
                CloudReference(recordID: CloudRecord.ID(recordName: "gone")),
            ]),
        ])
        let error = try await decodingError(root, in: [Self.book("b1")])
        #expect(error.code == .missingRecord)
        #expect(error.referencedRecordID == CloudRecord.ID(recordName: "gone"))
        #expect(error.path == ["books", "Index 1"])
        #expect(error.recordID == Self.shelfID)
        #expect(error.field == "books")
    }

    @Test func missingRequiredFieldOfANestedRecordNamesThatRecord() async throws {
        let root = Self.shelf(["favorite": reference("b1")])
        let error = try await decodingError(root, in: [Self.book("b1", ["title": .string("T")])])
        #expect(error.code == .missingField)
        #expect(error.path == ["favorite", "pages"])
        #expect(error.recordID == CloudRecord.ID(recordName: "b1"))
        #expect(error.field == "pages")
    }

    @Test func wrongFieldTypeIsATypeMismatchNamingBothTypes() async throws {
        let root = Self.shelf(["favorite": reference("b1")])
        let error = try await decodingError(root, in: [Self.book("b1", ["title": .int64(5), "pages": .int64(1)])])
        #expect(error.code == .typeMismatch)
        #expect(error.path == ["favorite", "title"])
        #expect(error.recordID == CloudRecord.ID(recordName: "b1"))
    }

    @Test func referenceWhereAValueIsExpectedIsATypeMismatch() async throws {
        let root = Self.shelf(["favorite": .string("not a reference")])
        let error = try await decodingError(root, in: [])
        #expect(error.code == .typeMismatch)
        #expect(error.path == ["favorite"])
    }

    @Test func integerTooLargeForItsTypeIsOutOfRange() throws {
        struct Small: CKCodable, Identifiable { var id: String; var count: UInt8 }
        let record = CloudRecord(
            recordType: "Small", id: CloudRecord.ID(recordName: "s"), fields: ["count": .int64(300)])
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Small.self, from: record, records: [])
        }
        #expect(error.code == .valueOutOfRange)
        #expect(error.path == ["count"])
    }

    @Test func boolOtherThanZeroOrOneIsCorrupted() throws {
        struct Flag: CKCodable, Identifiable { var id: String; var on: Bool }
        let record = CloudRecord(recordType: "Flag", id: CloudRecord.ID(recordName: "f"), fields: ["on": .int64(2)])
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Flag.self, from: record, records: [])
        }
        #expect(error.code == .corruptedValue)
        #expect(error.field == "on")
    }

    /// Such a date used to decode, and Foundation traps when an app prints one (NaN, or beyond about 9e18 s);
    /// CloudKit never stores one.
    @Test(arguments: [Double.nan, .infinity, -.infinity, 1e19, -8.7e12 - Date.timeIntervalBetween1970AndReferenceDate])
    func dateCloudKitCantStoreIsCorrupted(interval: Double) throws {
        struct Diary: CKCodable, Identifiable { var id: String; var opened: Date?; var entries: [Date] }
        let date = Date(timeIntervalSinceReferenceDate: interval)
        let single = CloudRecord(
            recordType: "Diary", id: CloudRecord.ID(recordName: "d"), fields: ["opened": .date(date)])
        let singleError = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Diary.self, from: single, records: [])
        }
        #expect(singleError.code == .corruptedValue)
        #expect(singleError.field == "opened")

        let list = CloudRecord(
            recordType: "Diary", id: CloudRecord.ID(recordName: "d"), fields: ["entries": .dateList([.now, date])])
        let listError = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Diary.self, from: list, records: [])
        }
        #expect(listError.path == ["entries", "Index 1"])
        #expect(listError.code == singleError.code)
    }

    struct Price: CKCodable, Identifiable { var id: String; var amount: Decimal }

    /// Found by the fuzzer: `Decimal(Double)` traps on infinity, and makes NaN of numbers beyond about 1e±110.
    @Test(arguments: [Double.infinity, -.infinity, .nan, 1e200, -1e150, .leastNonzeroMagnitude])
    func doubleThatNoDecimalHoldsIsOutOfRange(double: Double) throws {
        let record = CloudRecord(
            recordType: "Price", id: CloudRecord.ID(recordName: "p"), fields: ["amount": .double(double)])
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Price.self, from: record, records: [])
        }
        #expect(error.code == .valueOutOfRange)
        #expect(error.field == "amount")
    }

    @Test func doubleDecodesAsTheDecimalItShows() throws {
        let record = CloudRecord(
            recordType: "Price", id: CloudRecord.ID(recordName: "p"), fields: ["amount": .double(123.456)])
        #expect(
            try CKRecordDecoder().decode(Price.self, from: record, records: []).amount == Decimal(string: "123.456"))
    }

    @Test(arguments: ["/dev/zero", "/nonexistent/asset", NSTemporaryDirectory()])
    func assetThatIsNotAReadableRegularFileIsCorrupted(path: String) throws {
        struct Photo: CKCodable, Identifiable { var id: String; var image: Data }
        let asset = CloudAsset(fileURL: URL(fileURLWithPath: path))
        let record = CloudRecord(
            recordType: "Photo", id: CloudRecord.ID(recordName: "p"), fields: ["image": .asset(asset)])
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Photo.self, from: record, records: [])
        }
        #expect(
            error.code == .corruptedValue)
        #expect(error.field == "image")
    }

    @Test func assetBehindASymbolicLinkIsRead() throws {
        struct Photo: CKCodable, Identifiable { var id: String; var image: Data }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nckc-link-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("image.bin")
        try Data([1, 2, 3]).write(to: file)
        let link = directory.appendingPathComponent("link.bin")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)

        let record = CloudRecord(
            recordType: "Photo", id: CloudRecord.ID(recordName: "p"),
            fields: ["id": .string("p"), "image": .asset(CloudAsset(fileURL: link))])
        #expect(try CKRecordDecoder().decode(Photo.self, from: record, records: []).image == Data([1, 2, 3]))
    }

    @Test func locationWithATimestampCloudKitCantStoreIsCorrupted() throws {
        struct Visit: CKCodable, Identifiable { var id: String; var place: CloudLocation }
        let place = CloudLocation(latitude: 1, longitude: 2, timestamp: Date(timeIntervalSinceReferenceDate: .nan))
        let record = CloudRecord(
            recordType: "Visit", id: CloudRecord.ID(recordName: "v"), fields: ["place": .location(place)])
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Visit.self, from: record, records: [])
        }
        #expect(error.code == .corruptedValue)
        #expect(error.field == "place")
    }

    struct Profile: CKCodable, Identifiable {
        var id: String
        var address: RoundTripTests.Address
        var uuid: UUID?
    }

    @Test(arguments: ["{not json", "[1,2]", #"{"street": 5, "tags": []}"#])
    func malformedEmbeddedJSONIsAnErrorWithTheFullPath(json: String) throws {
        let record = CloudRecord(
            recordType: "Profile", id: CloudRecord.ID(recordName: "p"), fields: ["address": .string(json)])
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Profile.self, from: record, records: [])
        }
        #expect(error.recordID == CloudRecord.ID(recordName: "p"))
        #expect(error.field == "address")
        #expect(error.path.first == "address")
        switch error.code {
        case .corruptedValue, .typeMismatch: break
        default: Issue.record("unexpected \(error.code)")
        }
    }

    @Test func stringThatIsNotAUUIDIsCorrupted() throws {
        let record = CloudRecord(
            recordType: "Profile", id: CloudRecord.ID(recordName: "p"),
            fields: [
                "address": .string(#"{"street":"s","tags":[]}"#), "uuid": .string("nope"),
            ])
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Profile.self, from: record, records: [])
        }
        #expect(error.code == .corruptedValue)
        #expect(error.path == ["uuid"])
    }

    @Test func recordOfAnotherTypeIsATypeMismatch() async throws {
        let root = Self.shelf(["favorite": reference("b1")])
        let wrong = CloudRecord(
            recordType: "Magazine", id: CloudRecord.ID(recordName: "b1"),
            fields: ["title": .string("T"), "pages": .int64(1)])
        let error = try await decodingError(root, in: [wrong])
        #expect(error.code == .recordTypeMismatch)
        #expect(error.path == ["favorite"])
    }

    @Test func graphDeeperThanTheLimitStopsWithTheBoundsError() async throws {
        var decoder = CKRecordDecoder()
        decoder.maximumDepth = 5
        let chain = GraphDecodingTests.chain(length: 10)
        let records = try CKRecordEncoder().encode(chain)
        let database = InMemoryCloudDatabase()
        let saved = try await database.saveRecords(records)
        database.network.resetStatistics()
        let error = try await #require(throws: CKCodableError.self) {
            try await decoder.decode(
                GraphDecodingTests.Link.self, from: #require(saved.last), referenceDatabase: database)
        }
        #expect(error.code == .depthLimitExceeded)
        #expect(error.recordID == CloudRecord.ID(recordName: "6"))
        #expect(database.network.statistics.fetchRequests == 5)
    }

    @Test func graphWithMoreRecordsThanTheLimitStopsBeforeFetchingThem() async throws {
        var decoder = CKRecordDecoder()
        decoder.maximumRecordCount = 100
        let value = GraphDecodingTests.Class(
            id: "class", students: (0..<150).map { GraphDecodingTests.Leaf(id: "s\($0)", value: $0) })
        let database = InMemoryCloudDatabase()
        let saved = try await database.saveRecords(try CKRecordEncoder().encode(value))
        database.network.resetStatistics()
        let error = try await #require(throws: CKCodableError.self) {
            try await decoder.decode(
                GraphDecodingTests.Class.self, from: #require(saved.last), referenceDatabase: database)
        }
        #expect(error.code == .recordLimitExceeded)
        #expect(database.network.statistics.fetchRequests == 0)
    }

    @Test func databaseFailureIsADatabaseErrorNamingTheRecordBeingFetched() async throws {
        let database = InMemoryCloudDatabase()
        try await database.saveRecords([Self.book("b1")])
        database.network.throttleNextRequest(retryAfter: 3)
        let error = try await #require(throws: CKCodableError.self) {
            try await CKRecordDecoder().decode(
                Shelf.self, from: Self.shelf(["favorite": reference("b1")]), referenceDatabase: database)
        }
        #expect(error.code == .databaseError)
        #expect(error.databaseError == .requestRateLimited(retryAfter: 3))
        #expect(error.recordID == CloudRecord.ID(recordName: "b1"))
        #expect(error.path == ["favorite"])
    }

    @Test func failureOfOneRecordIsADatabaseErrorForThatRecord() async throws {
        let database = InMemoryCloudDatabase()
        try await database.saveRecords([Self.book("b1")])
        database.network.failRecord(CloudRecord.ID(recordName: "b1"), with: .networkFailure("reset"))
        let error = try await #require(throws: CKCodableError.self) {
            try await CKRecordDecoder().decode(
                Shelf.self, from: Self.shelf(["favorite": reference("b1")]), referenceDatabase: database)
        }
        #expect(error.code == .databaseError)
        #expect(error.databaseError == .networkFailure("reset"))
        #expect(error.recordID == CloudRecord.ID(recordName: "b1"))
    }

    /// Decodes with the completion handler and returns every call it got.
    func completions(
        from root: CloudRecord, database: InMemoryCloudDatabase
    ) async -> [(Shelf?, CKCodableError?)] {
        let calls = Locked<[(Shelf?, CKCodableError?)]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            CKRecordDecoder().decode(Shelf.self, from: root, referenceDatabase: database) { value, error in
                calls.withLock { $0.append((value, error)) }
                continuation.resume()
            }
        }
        // Any second call would come right after the first.
        try? await Task.sleep(for: .milliseconds(20))
        return calls.withLock { $0 }
    }

    @Test func completionHandlerIsCalledExactlyOnceWithTheValue() async throws {
        let database = InMemoryCloudDatabase()
        try await database.saveRecords([Self.book("b1")])
        let calls = await completions(from: Self.shelf(["favorite": reference("b1")]), database: database)
        #expect(calls.count == 1)
        #expect(calls.first?.0?.favorite.id == "b1")
        #expect(calls.first?.1 == nil)
    }

    @Test func completionHandlerIsCalledExactlyOnceWithEachKindOfError() async throws {
        let database = InMemoryCloudDatabase()
        try await database.saveRecords([Self.book("b1")])
        // A missing record, a database failure, and a decoding error.
        let missing = await completions(from: Self.shelf(["favorite": reference("gone")]), database: database)
        database.network.dropNextConnection()
        let failed = await completions(from: Self.shelf(["favorite": reference("b1")]), database: database)
        let corrupt = await completions(from: Self.shelf(["favorite": .int64(1)]), database: database)
        for (calls, code) in [
            (missing, CKCodableError.Code.missingRecord), (failed, .databaseError), (corrupt, .typeMismatch),
        ] {
            #expect(calls.count == 1)
            #expect(calls.first?.0 == nil)
            #expect(calls.first?.1?.code == code)
        }
        #expect(missing.first?.1?.referencedRecordID == CloudRecord.ID(recordName: "gone"))
        #expect(failed.first?.1?.databaseError == .networkFailure("the connection was lost"))
        #expect(corrupt.first?.1?.reason == "Expected a value for a reference to a Book record but found a INT64 field")
    }
}
