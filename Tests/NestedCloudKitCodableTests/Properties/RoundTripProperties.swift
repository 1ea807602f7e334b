import Foundation
import NestedCloudKitCodable
import PropertyBased
import TestSupport
import Testing

/// Properties over generated values: what holds for the examples elsewhere holds for any value.
@Suite("Round-trip properties")
struct RoundTripProperties {
    typealias Sample = GeneratedModels.Sample
    typealias Maker = GeneratedModels.Maker

    static let seeds = GeneratedModels.seeds

    @Test func encodingThenDecodingGivesTheSameValue() async {
        await propertyCheck(count: 200, input: Self.seeds) { seed in
            var maker = Maker(state: seed)
            let sample = maker.sample()
            let graph = try CKRecordEncoder().encodeGraph(sample)
            #expect(try CKRecordDecoder().decode(Sample.self, from: graph) == sample)
        }
    }

    @Test func encodingIsDeterministic() async {
        await propertyCheck(count: 100, input: Self.seeds) { seed in
            var maker = Maker(state: seed)
            let sample = maker.sample()
            // The same value built another way: sets and dictionaries with another capacity and insertion order
            // iterate in another order.
            var rebuilt = sample
            rebuilt.numbers = Set(minimumCapacity: 64)
            for number in sample.numbers.reversed() { rebuilt.numbers.insert(number) }
            rebuilt.dictionary = Dictionary(minimumCapacity: 64)
            for (key, value) in sample.dictionary.reversed() { rebuilt.dictionary[key] = value }
            let first = try CKRecordEncoder().encode(sample)
            let second = try CKRecordEncoder().encode(rebuilt)
            #expect(first == second)
            #expect(first.map(\.fields.names) == second.map(\.fields.names))
        }
    }
}
