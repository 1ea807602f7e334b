import Foundation
import NestedCloudKitCodable
import PropertyBased

/// Models with a property of every supported kind, and values of them made from a seed: what the property tests
/// of the coders, the record mappings and the backends generate.
package enum GeneratedModels {
    package enum Color: String, Codable, CaseIterable, Equatable { case red, green, blue }

    package enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case label(String, Int)
    }

    package struct Nested: Codable, Equatable {
        package var label: String
        package var count: Int?
        package var weights: [Double]
    }

    package struct Child: CKCodable, Identifiable, Equatable {
        package var id: String
        package var name: String
        package var score: Int

        package init(id: String, name: String, score: Int) {
            self.id = id
            self.name = name
            self.score = score
        }
    }

    /// Records of records: a graph as deep and as wide as the generator makes it.
    package struct Tree: CKCodable, Identifiable, Equatable {
        package var id: String
        package var label: String
        package var branches: [Tree]
    }

    /// A model with a property for every row of the mapping table.
    package struct Sample: CKCodable, Identifiable, Equatable {
        package var id: String
        package var text: String
        package var character: Character
        package var int: Int
        package var int8: Int8
        package var uint32: UInt32
        package var uint64: UInt64
        package var flag: Bool
        package var double: Double
        package var float: Float
        package var date: Date
        package var data: Data
        package var uuid: UUID
        package var link: URL
        package var decimal: Decimal
        package var location: CloudLocation
        package var color: Color
        package var shape: Shape
        package var strings: [String]
        package var numbers: Set<Int>
        package var optional: String?
        package var nested: Nested
        package var dictionary: [String: Int]
        package var child: Child?
        package var children: [Child]
        package var later: CloudLazyReference<Child>?
        package var tree: Tree
    }

    /// Makes a value of every field from a seed, so that a failing case is reported (by PropertyBased) as the seed
    /// that reproduces it.
    package struct Maker {
        package var state: UInt64

        package init(state: UInt64) {
            self.state = state
        }

        /// SplitMix64: small, fast, and the same on every platform.
        package mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        package mutating func int(_ range: ClosedRange<Int>) -> Int {
            range.lowerBound + Int(next() % UInt64(range.count))
        }
        package mutating func double(_ magnitude: Double) -> Double {
            (Double(next() % 2_000_001) / 1_000_000 - 1) * magnitude
        }
        package mutating func bool() -> Bool { next() % 2 == 0 }

        package mutating func text() -> String {
            let alphabet = Array("abcXYZ019 _-é漢👋\"\\{}[]:,\n")
            return String((0..<int(0...12)).map { _ in alphabet[int(0...(alphabet.count - 1))] })
        }

        package mutating func name() -> String {
            String((0..<int(1...8)).map { _ in Array("abcdefxyz0189")[int(0...12)] })
        }
        package mutating func data() -> Data { Data((0..<int(0...24)).map { _ in UInt8(truncatingIfNeeded: next()) }) }

        package mutating func sample() -> Sample {
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
        package mutating func tree(depth: Int, id: String) -> Tree {
            let width = depth == 0 ? 0 : int(0...3)
            return Tree(id: id, label: text(), branches: (0..<width).map { tree(depth: depth - 1, id: "\(id).\($0)") })
        }

        package mutating func fieldValue() -> CloudValue {
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

    package static let seeds = Gen.uint64()
}
