import Foundation
import NestedCloudKitCodable
import PropertyBased
import Testing

@testable import NestedCloudKitSync

/// On random flat models (every type a row holds: unicode, integers at their limits, infinities and negative
/// zero, dates to the millisecond and finer, bytes, optionals, enumerations), a model read from its table's row is the model its
/// record decodes to, by every read: all of a type, a query, by ID; and so is a model that references them, read a
/// level of its graph at a time from the rows. A failure reports the seed that replays it.
@Suite("Store: rows read as their records")
struct StoreTableProperties {
    @Test func randomModelsReadFromTheirRowsAsFromTheirRecords() async {
        await propertyCheck(count: 30, input: Gen.uint64()) { seed in
            var random = SplitMix64(seed: seed)
            do {
                try await Self.check(&random, seed: seed)
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    private static let texts = ["", "a", "é", "e\u{301}", "日本", "🙂", "a\"b", "a'b", "line\nbreak", "\u{0}x"]
    private static let integers: [Int] = [0, 1, -1, .max, .min, 42, -7_000_000_000]
    private static let reals: [Double] = [0, 1.5, -2.25, 1e-300, .leastNonzeroMagnitude, 1e300, -0.0]
    /// What the encoder refuses and another client may write.
    private static let nonFinite: [Double] = [.infinity, -.infinity]

    private static func pick<T>(_ values: [T], _ random: inout SplitMix64) -> T {
        values[Int(random.next() % UInt64(values.count))]
    }

    private static func date(_ random: inout SplitMix64) -> Date {
        // Whole milliseconds (what CloudKit keeps) and finer dates, which a row may not give back.
        let milliseconds = Double(Int64(random.next() % 4_000_000_000_000) - 1_000_000_000_000)
        let fraction = random.next() % 3 == 0 ? Double(random.next() % 1000) / 1e6 : 0
        return Date(timeIntervalSince1970: milliseconds / 1000 + fraction)
    }

    private static func check(_ random: inout SplitMix64, seed: UInt64) async throws {
        let store = try SyncStore.inMemory()
        var records: [CloudRecord] = []
        for index in 0..<Int(1 + random.next() % 12) {
            let model = FlatModel(
                id: "m\(index)", text: pick(texts, &random), number: pick(integers, &random),
                flag: random.next() % 2 == 0, real: pick(reals, &random), date: date(&random),
                bytes: Data((0..<Int(random.next() % 5)).map { _ in UInt8(random.next() % 256) }),
                optionalText: random.next() % 2 == 0 ? nil : pick(texts, &random),
                optionalNumber: random.next() % 2 == 0 ? nil : Int64(pick(integers, &random)),
                optionalDate: random.next() % 2 == 0 ? nil : date(&random), small: UInt8(random.next() % 256),
                mood: pick(FlatModel.Mood.allCases, &random),
                optionalMood: random.next() % 2 == 0 ? nil : pick(FlatModel.Mood.allCases, &random))
            // Saved as the encoder makes it, or as a record with a date finer than CloudKit keeps.
            let encoded = try #require(try CKRecordEncoder().encode(model).first)
            var record = CloudRecord(
                recordType: encoded.recordType, id: CloudRecord.ID(recordName: model.id, zoneID: store.zoneID))
            record.fields = encoded.fields
            if random.next() % 4 == 0 { record["date"] = .date(date(&random)) }
            if random.next() % 4 == 0 { record["real"] = .double(pick(nonFinite, &random)) }
            records.append(record)
        }
        try await store.save(records)
        let decoder = CKRecordDecoder()
        let expected = try records.sorted { $0.id.recordName < $1.id.recordName }.map {
            try decoder.decode(FlatModel.self, from: $0)
        }
        #expect(expected.count == records.count)
        let all = try await store.fetchAll(FlatModel.self)
        #expect(all == expected, "seed \(seed): \(zip(all, expected).filter { $0 != $1 })")
        #expect(try await store.fetch(ModelQuery(FlatModel.self)) == expected, "seed \(seed)")
        for model in expected {
            #expect(try await store.fetch(FlatModel.self, id: model.id) == model, "seed \(seed)")
        }
        // Read from the rows, not from the records: nothing the model reads sent it to them.
        #expect(TableRowReading.mayRead(FlatModel.self, recordType: "FlatModel"), "seed \(seed)")
        try await checkGraphs(over: records, in: store, &random, seed: seed)
    }

    /// A model that references the flat ones: a list, and an optional one that may name a record the store
    /// doesn't have.
    struct Holder: CKCodable, Identifiable, Equatable {
        var id: String
        var title: String
        var items: [FlatModel]
        var featured: FlatModel?
    }

    /// Random holders of the flat records (shared, repeated, empty lists, missing targets), read from their rows a
    /// level at a time: each the model its record and the records it references decode to.
    private static func checkGraphs(
        over items: [CloudRecord], in store: SyncStore, _ random: inout SplitMix64, seed: UInt64
    ) async throws {
        var holders: [CloudRecord] = []
        for index in 0..<Int(1 + random.next() % 6) {
            var holder = CloudRecord(
                recordType: "Holder", id: CloudRecord.ID(recordName: "h\(index)", zoneID: store.zoneID))
            holder["id"] = .string("h\(index)")
            holder["title"] = .string(pick(texts, &random))
            let list = (0..<Int(random.next() % 5)).map { _ in CloudReference(recordID: pick(items, &random).id) }
            // CloudKit stores no empty list: the field is missing.
            if !list.isEmpty { holder["items"] = .referenceList(list) }
            switch random.next() % 3 {
            case 0: holder["featured"] = .reference(CloudReference(recordID: pick(items, &random).id))
            case 1:
                let missing = CloudRecord.ID(recordName: "missing\(index)", zoneID: store.zoneID)
                holder["featured"] = .reference(CloudReference(recordID: missing))
            default: break
            }
            holders.append(holder)
        }
        try await store.save(holders)
        let decoder = CKRecordDecoder()
        let expected = try holders.map { try decoder.decode(Holder.self, from: $0, records: items) }
        let all = try await store.fetchAll(Holder.self)
        #expect(all == expected, "seed \(seed): \(zip(all, expected).filter { $0 != $1 })")
        for model in expected {
            #expect(try await store.fetch(Holder.self, id: model.id) == model, "seed \(seed)")
        }
        #expect(TableRowReading.mayRead(Holder.self, recordType: "Holder"), "seed \(seed)")
    }
}
