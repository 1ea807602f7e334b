import Foundation
import NestedCloudKitCodable
import Testing

@Suite("Decoding smoke")
struct DecodingSmokeTests {
    @Test func schoolRoundTrips() async throws {
        let (decoded, database) = try await roundTrip(School.example)
        #expect(decoded == School.example)
        let statistics = await database.statistics
        #expect(statistics.fetchRequests == 1)
        #expect(statistics.recordsFetched == 5)
    }

    @Test func schoolDecodesFromRecordsInHand() throws {
        let graph = try CKRecordEncoder().encodeGraph(School.example)
        #expect(try CKRecordDecoder().decode(School.self, from: graph) == School.example)
    }
}
