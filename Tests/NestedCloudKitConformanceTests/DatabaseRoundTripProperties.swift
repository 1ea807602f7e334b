import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import PropertyBased
import TestSupport
import Testing

/// Properties over generated values and records, through every backend: what a backend stores, it gives back.
@Suite("Database round-trip properties", .stopsEmulators)
struct DatabaseRoundTripProperties {
    typealias Sample = GeneratedModels.Sample
    typealias Maker = GeneratedModels.Maker

    static let seeds = GeneratedModels.seeds

    @Test func encodingThenDecodingThroughEachDatabaseGivesTheSameValue() async throws {
        await propertyCheck(count: 40, input: Self.seeds) { seed in
            var maker = Maker(state: seed)
            let sample = maker.sample()
            for backend in DatabaseBackend.all {
                let database = try await backend.makeDatabase()
                let saved = try await database.saveRecords(try CKRecordEncoder().encode(sample))
                let root = try #require(saved.last)
                let decoded = try await CKRecordDecoder().decode(Sample.self, from: root, referenceDatabase: database)
                #expect(decoded == sample, "through \(backend.name)")
            }
        }
    }

    @Test func aRecordWrittenToAndReadFromEachDatabaseIsUnchanged() async throws {
        await propertyCheck(count: 40, input: Self.seeds) { seed in
            var maker = Maker(state: seed)
            let record = CloudRecord(
                recordType: "Probe", id: CloudRecord.ID(recordName: "probe"),
                fields: CloudRecord.Fields(
                    (0..<maker.int(0...10)).map { _ in ("f\(maker.name())", maker.fieldValue()) }))
            for backend in DatabaseBackend.all {
                let database = try await backend.makeDatabase()
                let saved = try await database.save(record)
                let fetched = try await database.record(for: record.id)
                #expect(fetched.fields == backend.returned(record.fields), "through \(backend.name)")
                if backend.keepsFieldOrder {
                    #expect(fetched.fields.names == record.fields.names, "field order through \(backend.name)")
                }
                #expect(fetched == saved, "through \(backend.name)")
            }
        }
    }
}
