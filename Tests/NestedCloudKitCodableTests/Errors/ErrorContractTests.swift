import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

/// Models see Swift's standard `DecodingError`s, so the fallbacks they write for `JSONDecoder` work; callers see
/// `CKCodableError`s with the record, field and coding path, whatever the model throws.
@Suite("Error contract")
struct ErrorContractTests {
    enum Level: String, Codable { case beginner, expert }

    struct Course: CKCodable, Identifiable {
        var id: String
        var level: Level
    }

    struct Catalog: CKCodable, Identifiable {
        var id: String
        var featured: Course
    }

    struct ModelError: Error, Equatable {}

    /// Falls back to defaults the way models written for `JSONDecoder` do.
    struct Lenient: CKCodable, Identifiable {
        var id: String
        var pages: Int
        var rating: Int

        enum CodingKeys: String, CodingKey { case id, pages, rating }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            do {
                pages = try container.decode(Int.self, forKey: .pages)
            } catch DecodingError.keyNotFound {
                pages = 100
            }
            do {
                rating = try container.decode(Int.self, forKey: .rating)
            } catch DecodingError.typeMismatch {
                rating = -1
            }
        }
    }

    struct Picky: CKCodable, Identifiable {
        var id: String
        init(from decoder: any Decoder) throws { throw ModelError() }
        func encode(to encoder: any Encoder) throws {}
    }

    @Test func anEnumMeetingAnUnknownRawValueNamesTheRecordFieldAndPath() throws {
        let record = CloudRecord(
            recordType: "Course", id: CloudRecord.ID(recordName: "c1"),
            fields: ["id": .string("c1"), "level": .string("wizard")])

        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Course.self, from: record)
        }
        guard error.code == .rejectedByModel else {
            Issue.record("expected rejectedByModel, got \(error.code)")
            return
        }
        #expect(error.recordID == CloudRecord.ID(recordName: "c1"))
        #expect(error.field == "level")
        #expect(error.path == ["level"])
        #expect(error.underlyingError is DecodingError)
        #expect(error.description.contains("wizard"))
    }

    @Test func aNestedRecordsModelErrorNamesTheNestedRecord() async throws {
        let database = InMemoryCloudDatabase()
        let course = CloudRecord(
            recordType: "Course", id: CloudRecord.ID(recordName: "c1"),
            fields: ["id": .string("c1"), "level": .string("wizard")])
        let catalog = CloudRecord(
            recordType: "Catalog", id: CloudRecord.ID(recordName: "cat"),
            fields: ["id": .string("cat"), "featured": reference("c1")])
        try await database.saveRecords([course, catalog])

        let error = try await #require(throws: CKCodableError.self) {
            try await CKRecordDecoder().decode(Catalog.self, from: catalog, referenceDatabase: database)
        }
        guard error.code == .rejectedByModel else {
            Issue.record("expected rejectedByModel, got \(error.code)")
            return
        }
        #expect(error.recordID == CloudRecord.ID(recordName: "c1"))
        #expect(error.path == ["featured", "level"])
        #expect(error.field == "level")
    }

    @Test func aModelCatchingKeyNotFoundAndTypeMismatchFallsBack() throws {
        let record = CloudRecord(
            recordType: "Lenient", id: CloudRecord.ID(recordName: "l"),
            fields: ["id": .string("l"), "rating": .string("five")])

        let value = try CKRecordDecoder().decode(Lenient.self, from: record)
        #expect(value.pages == 100)
        #expect(value.rating == -1)
    }

    @Test func theLibrarysErrorReachesTheModelAsADecodingErrorCarryingIt() throws {
        struct Inspecting: CKCodable, Identifiable {
            var id: String
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: NamedKeys.self)
                id = try container.decode(String.self, forKey: NamedKeys(stringValue: "id"))
                do {
                    _ = try container.decode(Int.self, forKey: NamedKeys(stringValue: "missing"))
                } catch DecodingError.keyNotFound(let key, let context) {
                    let ours = try #require(context.underlyingError as? CKCodableError)
                    #expect(key.stringValue == "missing")
                    #expect(context.codingPath.isEmpty)
                    #expect(ours.code == .missingField)
                    #expect(ours.recordID == CloudRecord.ID(recordName: "i"))
                }
            }
            func encode(to encoder: any Encoder) throws {}
        }
        _ = try CKRecordDecoder().decode(
            Inspecting.self,
            from: CloudRecord(
                recordType: "Inspecting", id: CloudRecord.ID(recordName: "i"), fields: ["id": .string("i")]))
    }

    @Test func aMissingFieldStillReachesTheCallerAsCKCodableError() throws {
        let record = CloudRecord(
            recordType: "Course", id: CloudRecord.ID(recordName: "c1"), fields: ["id": .string("c1")])

        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Course.self, from: record)
        }
        #expect(error.code == .missingField)
        #expect(error.path == ["level"])
        #expect(error.recordID == CloudRecord.ID(recordName: "c1"))
    }

    /// A model that throws the library's error, with what it is about, reaches the caller with it unchanged.
    struct Linked: CKCodable, Identifiable {
        var id: String
        init(from decoder: any Decoder) throws {
            throw CKCodableError(
                .missingRecord, codingPath: [], recordID: CloudRecord.ID(recordName: "l"), field: "next",
                reason: "next is gone", referencedRecordID: CloudRecord.ID(recordName: "gone"),
                databaseError: .unknownItem(CloudRecord.ID(recordName: "gone")))
        }
        func encode(to encoder: any Encoder) throws {}
    }

    @Test func aModelsOwnCKCodableErrorKeepsWhatItIsAbout() throws {
        let record = CloudRecord(recordType: "Linked", id: CloudRecord.ID(recordName: "l"), fields: [:])
        let error = try #require(throws: CKCodableError.self) {
            try CKRecordDecoder().decode(Linked.self, from: record)
        }
        #expect(error.code == .missingRecord)
        #expect(error.field == "next")
        #expect(error.referencedRecordID == CloudRecord.ID(recordName: "gone"))
        #expect(error.databaseError == .unknownItem(CloudRecord.ID(recordName: "gone")))
    }

    @Test func anyOtherErrorAModelThrowsIsWrappedWithTheRecord() throws {
        let record = CloudRecord(recordType: "Picky", id: CloudRecord.ID(recordName: "p"), fields: [:])

        let error = try #require(throws: CKCodableError.self) { try CKRecordDecoder().decode(Picky.self, from: record) }
        guard error.code == .rejectedByModel else {
            Issue.record("expected rejectedByModel, got \(error.code)")
            return
        }
        #expect(error.recordID == CloudRecord.ID(recordName: "p"))
        #expect(error.underlyingError as? ModelError == ModelError())
    }

    @Test func aDatabasesOwnErrorIsADatabaseErrorKeepingTheOriginal() async throws {
        let database = ThrowingDatabase()
        let root = CloudRecord(
            recordType: "Catalog", id: CloudRecord.ID(recordName: "cat"),
            fields: ["id": .string("cat"), "featured": reference("c1")])

        let error = try await #require(throws: CKCodableError.self) {
            try await CKRecordDecoder().decode(Catalog.self, from: root, referenceDatabase: database)
        }
        guard error.code == .databaseError, let databaseError = error.databaseError,
            databaseError.code == .internalError
        else {
            Issue.record("expected databaseError(internalError), got \(error.code)")
            return
        }
        #expect(error.underlyingError is ThrowingDatabase.Failure)
        #expect(error.recordID == CloudRecord.ID(recordName: "c1"))
    }

    @Test func aCancelledDecodeThrowsCancellationError() async throws {
        let database = InMemoryCloudDatabase(latency: .seconds(3600))
        let root = CloudRecord(
            recordType: "Catalog", id: CloudRecord.ID(recordName: "cat"),
            fields: ["id": .string("cat"), "featured": reference("c1")])
        let task = Task {
            try await CKRecordDecoder().decode(Catalog.self, from: root, referenceDatabase: database)
        }
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
    }
}

/// A database that fails every request with an error of its own.
struct ThrowingDatabase: CloudDatabase {
    struct Failure: Error {}
    var maximumItemsPerRequest: Int { 400 }
    func records(for ids: [CloudRecord.ID], desiredKeys: [String]?) async throws -> CloudRecordResults {
        throw Failure()
    }
    func modifyRecords(
        saving: [CloudRecord], deleting: [CloudRecord.ID], savePolicy: CloudRecordSavePolicy, atomically: Bool
    ) async throws -> CloudModifyResults { throw Failure() }
    func records(
        matching query: CloudQuery, inZoneWith zoneID: CloudRecord.ZoneID, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> CloudQueryPage { throw Failure() }
    func records(continuingMatchFrom cursor: CloudQuery.Cursor, desiredKeys: [String]?, resultsLimit: Int) async throws
        -> CloudQueryPage
    { throw Failure() }
    func modifyRecordZones(saving: [CloudRecord.ZoneID], deleting: [CloudRecord.ZoneID]) async throws
        -> CloudZoneModifyResults
    { throw Failure() }
    func allRecordZones() async throws -> [CloudRecord.ZoneID] { throw Failure() }
    func recordZoneChanges(
        inZoneWith zoneID: CloudRecord.ZoneID, since token: CloudChangeToken?, desiredKeys: [String]?,
        resultsLimit: Int?
    ) async throws -> CloudRecordZoneChanges { throw Failure() }
    func databaseChanges(since token: CloudChangeToken?, resultsLimit: Int?) async throws -> CloudDatabaseChanges {
        throw Failure()
    }
    func userRecordName() async throws -> String { throw Failure() }
    func accountStatus() async throws -> CloudAccountStatus { throw Failure() }
    func modifySubscriptions(
        saving subscriptionsToSave: [CloudSubscription], deleting subscriptionIDsToDelete: [CloudSubscription.ID]
    ) async throws -> CloudSubscriptionModifyResults { throw Failure() }
    func allSubscriptions() async throws -> [CloudSubscription] { throw Failure() }
}

/// Keys named at run time.
struct NamedKeys: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
