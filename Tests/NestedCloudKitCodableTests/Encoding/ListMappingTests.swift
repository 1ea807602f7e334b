import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// Arrays and sets of every field type become typed lists.
@Suite("List mapping")
struct ListMappingTests {
    struct Lists: CKEncodable {
        var cloudKitIdentifier: String { "lists" }
        var strings: [String] = ["b", "a"]
        var characters: [Character] = ["x"]
        var uuids: [UUID] = [UUID(uuidString: "00000000-0000-0000-0000-000000000001")!]
        var ints: [Int] = [3, -1]
        var int8s: [Int8] = [-8]
        var uint32s: [UInt32] = [32]
        var bools: [Bool] = [true, false]
        var doubles: [Double] = [1.5, -0.25]
        var floats: [Float] = [0.5]
        var dates: [Date] = [Date(timeIntervalSince1970: 1.000_9), .milliseconds(5)]
        var datas: [Data] = [Data([1]), Data([2, 3])]
        var urls: [URL] = [URL(string: "https://a.example")!]
        var files: [URL] = [URL(fileURLWithPath: "/tmp/f")]
        var locations: [CloudLocation] = [CloudLocation(latitude: 1, longitude: 2)]
        var decimals: [Decimal] = [Decimal(string: "1.1")!]
    }

    @Test func arraysOfEveryFieldTypeBecomeTypedLists() throws {
        try expectFields(
            of: Lists(),
            equal: [
                "strings": .stringList(["b", "a"]),
                "characters": .stringList(["x"]),
                "uuids": .stringList(["00000000-0000-0000-0000-000000000001"]),
                "ints": .int64List([3, -1]),
                "int8s": .int64List([-8]),
                "uint32s": .int64List([32]),
                "bools": .int64List([1, 0]),
                "doubles": .doubleList([1.5, -0.25]),
                "floats": .doubleList([0.5]),
                "dates": .dateList([.milliseconds(1000), .milliseconds(5)]),
                "datas": .bytesList([Data([1]), Data([2, 3])]),
                "urls": .stringList(["https://a.example"]),
                "files": .assetList([CloudAsset(fileURL: URL(fileURLWithPath: "/tmp/f"))]),
                "locations": .locationList([CloudLocation(latitude: 1, longitude: 2)]),
                "decimals": .stringList(["1.1"]),
            ])
    }

    @Test func dataListBecomesAssetsWhenItsTotalSizePassesTheThreshold() throws {
        struct Pictures: CKEncodable {
            var cloudKitIdentifier: String { "p" }
            var pictures: [Data]
        }
        var encoder = CKRecordEncoder()
        encoder.dataEncodingStrategy = .automatic(assetThreshold: 3)
        let pictures = [Data([1, 2]), Data([3, 4])]
        try expectFields(
            of: Pictures(pictures: pictures), with: encoder,
            equal: ["pictures": .assetList(pictures.map { CloudAsset(data: $0) })])
    }

    struct Sets: CKEncodable {
        var cloudKitIdentifier: String { "sets" }
        var strings: Set<String>
        var ints: Set<Int>
        var doubles: Set<Double>
        var dates: Set<Date>
        var datas: Set<Data>
    }

    @Test func setsBecomeSortedListsSoTheOutputNeverChanges() throws {
        let value = Sets(
            strings: ["pear", "apple", "fig", "kiwi", "banana"], ints: [5, -3, 12, 0], doubles: [2.5, -1, 0.25],
            dates: [.milliseconds(9), .milliseconds(1)], datas: [Data([2]), Data([1, 9]), Data([1])]
        )
        try expectFields(
            of: value,
            equal: [
                "strings": .stringList(["apple", "banana", "fig", "kiwi", "pear"]),
                "ints": .int64List([-3, 0, 5, 12]),
                "doubles": .doubleList([-1, 0.25, 2.5]),
                "dates": .dateList([.milliseconds(1), .milliseconds(9)]),
                "datas": .bytesList([Data([1]), Data([1, 9]), Data([2])]),
            ])
    }

    struct Empty: CKEncodable {
        var cloudKitIdentifier: String { "empty" }
        var tags: [String]
        var scores: Set<Int>
        var kept: [Int]
    }

    @Test func emptyListsAreLeftOutOfANewRecord() throws {
        // CloudKit can't create a field from an empty list; the decoder reads a missing list as empty.
        try expectFields(of: Empty(tags: [], scores: [], kept: [1]), equal: ["kept": .int64List([1])])
    }

    struct Irregular: CKEncodable {
        var cloudKitIdentifier: String { "irregular" }
        var optionals: [Int?]
        var grid: [[Int]]
    }

    @Test func arraysThatAreNotListsOfOneTypeAreEmbeddedAsJSON() throws {
        try expectFields(
            of: Irregular(optionals: [1, nil, 3], grid: [[1, 2], [3]]),
            equal: [
                "optionals": .string("[1,null,3]"), "grid": .string("[[1,2],[3]]"),
            ])
    }
}
