import EmulatorTestSupport
import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite
import PropertyBased
import Testing

/// Properties over generated values: what holds for the examples elsewhere holds for any value.
@Suite("Round-trip properties", .stopsEmulators)
struct RoundTripProperties {
    enum Color: String, Codable, CaseIterable, Equatable { case red, green, blue }

    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case label(String, Int)
    }

    struct Nested: Codable, Equatable {
        var label: String
        var count: Int?
        var weights: [Double]
    }

    struct Child: CKCodable, Identifiable, Equatable {
        var id: String
        var name: String
        var score: Int
    }

    /// Records of records: a graph as deep and as wide as the generator makes it.
    struct Tree: CKCodable, Identifiable, Equatable {
        var id: String
        var label: String
        var branches: [Tree]
    }

    /// A model with a property for every row of the mapping table.
    struct Sample: CKCodable, Identifiable, Equatable {
        var id: String
        var text: String
        var character: Character
        var int: Int
        var int8: Int8
        var uint32: UInt32
        var uint64: UInt64
        var flag: Bool
        var double: Double
        var float: Float
        var date: Date
        var data: Data
        var uuid: UUID
        var link: URL
        var decimal: Decimal
        var location: CloudLocation
        var color: Color
        var shape: Shape
        var strings: [String]
        var numbers: Set<Int>
        var optional: String?
        var nested: Nested
        var dictionary: [String: Int]
        var child: Child?
        var children: [Child]
        var later: CloudLazyReference<Child>?
        var tree: Tree
    }

    /// Makes a value of every field from a seed, so that a failing case is reported (by PropertyBased) as the seed
    /// that reproduces it.
    struct Maker {
        var state: UInt64

        /// SplitMix64: small, fast, and the same on every platform.
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
        mutating func double(_ magnitude: Double) -> Double { (Double(next() % 2_000_001) / 1_000_000 - 1) * magnitude }
        mutating func bool() -> Bool { next() % 2 == 0 }

        mutating func text() -> String {
            let alphabet = Array("abcXYZ019 _-é漢👋\"\\{}[]:,\n")
            return String((0..<int(0...12)).map { _ in alphabet[int(0...(alphabet.count - 1))] })
        }

        mutating func name() -> String { String((0..<int(1...8)).map { _ in Array("abcdefxyz0189")[int(0...12)] }) }
        mutating func data() -> Data { Data((0..<int(0...24)).map { _ in UInt8(truncatingIfNeeded: next()) }) }

        mutating func sample() -> Sample {
            let children = (0..<int(0...5)).map {
                Child(id: "child-\($0)-\(name())", name: text(), score: int(-100...100))
            }
            var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: next()) }
            bytes[6] = bytes[6] & 0x0F | 0x40
            return Sample(
                id: "sample-\(name())", text: text(), character: Array("aé漢👋\n\"")[int(0...5)],
                int: Int(truncatingIfNeeded: next()), int8: Int8(truncatingIfNeeded: next()),
                uint32: UInt32(truncatingIfNeeded: next()), uint64: next() >> 1, flag: bool(), double: double(1e300),
                float: Float(double(1e30)),
                date: Date(timeIntervalSince1970: Double(int(-8_000_000_000_000...8_000_000_000_000)) / 1000),
                data: data(),
                uuid: UUID(
                    uuid: (
                        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                        bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                    )),
                link: URL(string: "https://example.com/\(name())?q=\(int(0...99))")!,
                decimal: Decimal(string: "\(int(-1_000_000...1_000_000))e-\(int(0...6))") ?? 0,
                location: CloudLocation(latitude: double(90), longitude: double(180), altitude: double(9000)),
                color: Color.allCases[int(0...2)],
                shape: bool() ? .circle(radius: double(10)) : .label(text(), int(-9...9)),
                strings: (0..<int(0...5)).map { _ in text() },
                numbers: Set((0..<int(0...6)).map { _ in int(-50...50) }), optional: bool() ? text() : nil,
                nested: Nested(
                    label: text(), count: bool() ? int(-5...5) : nil, weights: (0..<int(0...4)).map { _ in double(1e6) }
                ),
                dictionary: Dictionary(
                    (0..<int(0...4)).map { _ in (name(), int(-9...9)) }, uniquingKeysWith: { first, _ in first }),
                child: bool() ? Child(id: "only-\(name())", name: text(), score: int(0...9)) : nil, children: children,
                later: bool() ? CloudLazyReference(recordID: CloudRecord.ID(recordName: "later-\(name())")) : nil,
                tree: tree(depth: int(0...4), id: "tree")
            )
        }

        /// A tree up to `depth` levels below its root; IDs are paths, so that they are unique.
        mutating func tree(depth: Int, id: String) -> Tree {
            let width = depth == 0 ? 0 : int(0...3)
            return Tree(id: id, label: text(), branches: (0..<width).map { tree(depth: depth - 1, id: "\(id).\($0)") })
        }

        mutating func fieldValue() -> CloudValue {
            switch int(0...10) {
            case 0: .string(text())
            case 1: .int64(Int64(bitPattern: next()))
            case 2:
                .double(
                    [0.0, -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude][int(0...5)]
                        + (bool() ? 0 : double(1e12)))
            case 3:
                .date(
                    CloudValue.normalizedDate(Date(timeIntervalSince1970: Double(int(-8_000_000_000...8_000_000_000)))))
            case 4: bool() ? .bytes(data()) : .bytesList((0..<int(1...3)).map { _ in data() })
            case 5:
                bool()
                    ? .reference(CloudReference(recordID: CloudRecord.ID(recordName: "t-\(name())")))
                    : .referenceList(
                        (0..<int(1...3)).map { _ in CloudReference(recordID: CloudRecord.ID(recordName: "t-\(name())"))
                        })
            case 6:
                bool()
                    ? .location(
                        CloudLocation(
                            latitude: double(90), longitude: double(180), altitude: double(100),
                            timestamp: CloudValue.normalizedDate(
                                Date(timeIntervalSince1970: Double(int(0...2_000_000_000))))))
                    : .locationList(
                        (0..<int(1...3)).map { _ in CloudLocation(latitude: double(90), longitude: double(180)) })
            case 7: .stringList((0..<int(1...4)).map { _ in text() })
            case 8: .int64List((0..<int(1...4)).map { _ in Int64(bitPattern: next()) })
            case 9: .doubleList((0..<int(1...4)).map { _ in double(1) })
            default:
                .dateList(
                    (0..<int(1...3)).map { _ in
                        CloudValue.normalizedDate(Date(timeIntervalSince1970: Double(int(0...2_000_000_000))))
                    })
            }
        }
    }

    static let seeds = Gen.uint64()

    @Test func encodingThenDecodingGivesTheSameValue() async {
        await propertyCheck(count: 200, input: Self.seeds) { seed in
            var maker = Maker(state: seed)
            let sample = maker.sample()
            let graph = try CKRecordEncoder().encodeGraph(sample)
            #expect(try CKRecordDecoder().decode(Sample.self, from: graph) == sample)
        }
    }

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
