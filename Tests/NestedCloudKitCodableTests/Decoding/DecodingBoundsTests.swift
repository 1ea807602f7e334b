import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

/// Hostile shapes at full size: each either decodes within the decoder's bounds or stops with the bound's error,
/// after a bounded number of requests, and never by overflowing the stack.
@Suite("Decoding bounds")
struct DecodingBoundsTests {
    struct Link: CKCodable, Identifiable {
        var id: Int
        var next: [Link]
    }

    struct Hub: CKCodable, Identifiable {
        var id: String
        var spokes: [Spoke]
    }

    struct Spoke: CKCodable, Identifiable {
        var id: String
        var value: Int
    }

    struct Series: CKCodable, Identifiable {
        var id: String
        var samples: [Int]
    }

    /// `Link` records `0 → 1 → … → length - 1`, saved as records so that no Swift value of that depth exists
    /// before the decoder builds one.
    static func savedChain(length: Int) async throws -> (root: CloudRecord, database: InMemoryCloudDatabase) {
        let records = (0..<length).map { index in
            record(
                "Link", "\(index)",
                [
                    "id": .int64(Int64(index)),
                    "next": .referenceList(
                        index + 1 < length ? [CloudReference(recordID: CloudRecord.ID(recordName: "\(index + 1)"))] : []
                    ),
                ])
        }
        let database = InMemoryCloudDatabase()
        try await database.saveRecords(records.reversed())
        database.network.resetStatistics()
        return (records[0], database)
    }

    /// The chain's length, counted while taking it apart link by link: Swift releases a value this deep
    /// recursively, a frame per link, and would overflow the stack.
    static func dismantle(_ chain: consuming Link) -> Int {
        var length = 1
        var rest = chain.next
        chain.next = []
        while let link = rest.first {
            rest = link.next
            length += 1
        }
        return length
    }

    @Test func hundredThousandDeepChainStopsAtTheDefaultDepthLimit() async throws {
        let (root, database) = try await Self.savedChain(length: 100_000)
        let decoder = CKRecordDecoder()
        let error = try await #require(throws: CKCodableError.self) {
            try await decoder.decode(Link.self, from: root, referenceDatabase: database)
        }
        #expect(error.code == .depthLimitExceeded)
        #expect(error.recordID == CloudRecord.ID(recordName: "\(decoder.maximumDepth + 1)"))
        #expect(database.network.statistics.fetchRequests == decoder.maximumDepth)
    }

    @Test func hundredThousandDeepChainDecodesWhenTheBoundsAllowIt() async throws {
        let (root, database) = try await Self.savedChain(length: 100_000)
        var decoder = CKRecordDecoder()
        decoder.maximumDepth = 100_000
        let chain = try await decoder.decode(Link.self, from: root, referenceDatabase: database)
        let length = Self.dismantle(consume chain)
        #expect(length == 100_000)
        #expect(database.network.statistics.fetchRequests == 99_999)
    }

    /// Every record below the root is decoded and cached before the root fails: the cache, the only owner of
    /// the chain, must be let go without releasing it recursively.
    @Test func hundredThousandDeepChainWhoseRootFailsLetsGoOfItsValues() async throws {
        let (root, database) = try await Self.savedChain(length: 100_000)
        var broken = root
        broken.fields["id"] = .string("zero")
        var decoder = CKRecordDecoder()
        decoder.maximumDepth = 100_000
        let error = try await #require(throws: CKCodableError.self) {
            try await decoder.decode(Link.self, from: broken, referenceDatabase: database)
        }
        #expect(error.code == .typeMismatch)
        #expect(error.recordID == root.id)
    }

    @Test func millionElementListDecodes() async throws {
        let samples = (0..<1_000_000).map { Int64($0 * 3) }
        let root = record("Series", "series", ["id": .string("series"), "samples": .int64List(samples)])
        let series = try await CKRecordDecoder().decode(
            Series.self, from: root, referenceDatabase: InMemoryCloudDatabase())
        #expect(series.samples.count == 1_000_000)
        #expect(series.samples.last == 2_999_997)
    }

    @Test func millionReferenceListStopsAtTheRecordLimitBeforeFetching() async throws {
        let spokes = (0..<1_000_000).map { CloudReference(recordID: CloudRecord.ID(recordName: "spoke-\($0)")) }
        let root = record("Hub", "hub", ["id": .string("hub"), "spokes": .referenceList(spokes)])
        let database = InMemoryCloudDatabase()
        let decoder = CKRecordDecoder()
        let error = try await #require(throws: CKCodableError.self) {
            try await decoder.decode(Hub.self, from: root, referenceDatabase: database)
        }
        #expect(error.code == .recordLimitExceeded)
        #expect(error.path == ["spokes", "Index 99999"], "the root and 100,000 spokes would be one record too many")
        #expect(database.network.statistics.fetchRequests == 0)
    }

    static func savedFanOut(width: Int) async throws -> (root: CloudRecord, database: InMemoryCloudDatabase) {
        let hub = Hub(id: "hub", spokes: (0..<width).map { Spoke(id: "spoke-\($0)", value: $0) })
        let database = InMemoryCloudDatabase()
        let saved = try await database.saveRecords(try CKRecordEncoder().encode(hub))
        database.network.resetStatistics()
        return (try #require(saved.last), database)
    }

    @Test func tenThousandWayFanOutDecodesInRequestsOfTheDatabaseLimit() async throws {
        let (root, database) = try await Self.savedFanOut(width: 10_000)
        let hub = try await CKRecordDecoder().decode(Hub.self, from: root, referenceDatabase: database)
        #expect(hub.spokes.count == 10_000)
        #expect(hub.spokes.last?.value == 9_999)
        let statistics = database.network.statistics
        #expect(statistics.fetchRequests == 25, "10,000 records in requests of 400")
        #expect(statistics.recordsFetched == 10_000)
    }

    @Test func tenThousandWayFanOutOverTheRecordLimitStopsBeforeFetching() async throws {
        let (root, database) = try await Self.savedFanOut(width: 10_000)
        var decoder = CKRecordDecoder()
        decoder.maximumRecordCount = 9_999
        let error = try await #require(throws: CKCodableError.self) {
            try await decoder.decode(Hub.self, from: root, referenceDatabase: database)
        }
        #expect(error.code == .recordLimitExceeded)
        #expect(database.network.statistics.fetchRequests == 0)
    }
}
