import Foundation
import PropertyBased
import Testing

@testable import NestedCloudKitSync

/// The edit times' JSON, written and read by hand: the bytes Foundation's `JSONEncoder` writes with `.sortedKeys`
/// (so devices of earlier releases read and write the same), and anything else read by Foundation's decoder.
@Suite("Store: edit times as JSON")
struct EditTimesTests {
    private static let alphabet = Array("abcXYZ_.019")

    @Test func randomTimesAreTheBytesFoundationWritesAndReadBack() async {
        await propertyCheck(count: 200, input: Gen.uint64()) { seed in
            var random = SplitMix64(seed: seed)
            var times: [String: Int64] = [:]
            for _ in 0..<Int(random.next() % 8) {
                let name = String(
                    (0..<Int(1 + random.next() % 6)).map { _ in
                        Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))]
                    })
                times[name] = [Int64.min, .max, 0, -1, 1_790_000_000_000][Int(random.next() % 5)]
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let foundation = String(decoding: (try? encoder.encode(times)) ?? Data(), as: UTF8.self)
            #expect(EditTimes.json(times) == foundation, "seed \(seed)")
            #expect(EditTimes.decode(Data(EditTimes.json(times).utf8)) == times, "seed \(seed)")
        }
    }

    @Test func whatTheHandReaderDoesntTakeFoundationReads() {
        #expect(EditTimes.decode(Data(#"{ "a" : 1 , "b":-2 }"#.utf8)) == ["a": 1, "b": -2])
        #expect(EditTimes.decode(Data(#"{"caf\u00e9":3}"#.utf8)) == ["café": 3])
        #expect(EditTimes.json(["café": 3]) == #"{"café":3}"#)
        #expect(EditTimes.decode(Data(#"{"a":99999999999999999999}"#.utf8)) == [:])
        #expect(EditTimes.decode(Data(#"{"a":1} trailing"#.utf8)) == [:])
        #expect(EditTimes.decode(Data("{}".utf8)) == [:])
    }
}
