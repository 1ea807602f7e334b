import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

/// Resolving learns each type's record fields from one record and reads the rest from that; a model that decodes
/// different fields in different records still comes back whole.
@Suite("Schema resolution")
struct SchemaResolutionTests {
    struct Pet: CKCodable, Identifiable, Equatable {
        var id: String
    }

    struct Owner: CKCodable, Identifiable, Equatable {
        var id: String
        var pet: Pet?
        var pets: [Pet] = []
    }

    struct Street: CKCodable, Identifiable, Equatable {
        var id: String
        var owners: [Owner]
    }

    @Test func fieldAbsentFromTheFirstRecordOfATypeIsStillFollowedInTheOthers() async throws {
        // The first owner has no pets at all; the others do, in both fields.
        let street = Street(
            id: "street",
            owners: [
                Owner(id: "o0"),
                Owner(id: "o1", pet: Pet(id: "p1")),
                Owner(id: "o2", pets: [Pet(id: "p2"), Pet(id: "p3")]),
            ])
        let (decoded, database) = try await roundTrip(street)
        #expect(decoded == street)
        let statistics = database.network.statistics
        #expect(statistics.fetchRequests == 2)  // owners, then pets: no extra round
        #expect(statistics.recordsFetched == 6)
    }

    struct Note: CKCodable, Identifiable, Equatable {
        var id: String
        var kind: String
        var attachment: Pet?

        enum CodingKeys: String, CodingKey { case id, kind, attachment }

        // Decodes `attachment` only for some kinds: the first note resolved doesn't show that field.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            kind = try container.decode(String.self, forKey: .kind)
            attachment = kind == "rich" ? try container.decodeIfPresent(Pet.self, forKey: .attachment) : nil
        }

        init(id: String, kind: String, attachment: Pet? = nil) {
            self.id = id
            self.kind = kind
            self.attachment = attachment
        }
    }

    struct Notebook: CKCodable, Identifiable, Equatable {
        var id: String
        var notes: [Note]
    }

    @Test func modelThatDecodesDifferentFieldsInDifferentRecordsStillComesBackWhole() async throws {
        let notebook = Notebook(
            id: "book",
            notes: [
                Note(id: "n0", kind: "plain"),
                Note(id: "n1", kind: "rich", attachment: Pet(id: "a1")),
            ])
        let (decoded, database) = try await roundTrip(notebook)
        #expect(decoded == notebook)
        let statistics = database.network.statistics
        #expect(statistics.recordsFetched == 3)
        #expect(statistics.fetchRequests == 2)
    }

    @Test func recordLimitHoldsForAModelThatDecodesDifferentFieldsInDifferentRecords() async throws {
        let notebook = Notebook(
            id: "book",
            notes: [Note(id: "n0", kind: "plain")]
                + (1...3).map {
                    Note(id: "n\($0)", kind: "rich", attachment: Pet(id: "a\($0)"))
                })
        let database = InMemoryCloudDatabase()
        let saved = try await database.saveRecords(try CKRecordEncoder().encode(notebook))
        database.network.resetStatistics()
        var decoder = CKRecordDecoder()
        decoder.maximumRecordCount = 6  // the notebook and its notes fit; their three attachments don't

        let error = try await #require(throws: CKCodableError.self) {
            try await decoder.decode(Notebook.self, from: #require(saved.last), referenceDatabase: database)
        }
        #expect(error.code == .recordLimitExceeded)
        #expect(database.network.statistics.fetchRequests == 1, "the notes, and nothing past the limit")
    }
}
