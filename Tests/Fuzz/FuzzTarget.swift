// A libFuzzer target: arbitrary bytes become arbitrary records and reference graphs (wrong field types, missing
// fields, dangling and cyclic references, long lists and chains, odd names, malformed embedded JSON, huge, tiny and
// non-finite numbers and dates), which are decoded into several models, from records in hand and through an
// in-memory database. Any crash or sanitizer report is a bug; thrown errors are the expected outcome.
// Built and run by scripts/fuzz.sh, compiled together with the library's sources and CallingThreadExecutor.swift.
import Foundation

/// Reads the fuzzer's bytes as a stream of choices; past the end every choice is 0.
struct Choices {
    let bytes: [UInt8]
    var position = 0

    mutating func byte() -> UInt8 {
        defer { position += 1 }
        return position < bytes.count ? bytes[position] : 0
    }

    mutating func below(_ bound: Int) -> Int { bound <= 1 ? 0 : Int(byte()) % bound }

    mutating func int64() -> Int64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return Int64(bitPattern: value)
    }

    mutating func double() -> Double {
        switch below(8) {
        case 0: .nan
        case 1: .infinity
        case 2: -.infinity
        case 3: .greatestFiniteMagnitude
        case 4: .leastNonzeroMagnitude
        default: Double(bitPattern: UInt64(bitPattern: int64()))
        }
    }

    mutating func string() -> String {
        switch below(10) {
        case 0: return Self.jsonSnippets[below(Self.jsonSnippets.count)]
        case 1: return String(repeating: "[", count: below(256) * 4)
        case 2: return "\(double());\(double())"
        case 3: return Self.names[below(Self.names.count)]
        default:
            let count = below(24)
            return String(decoding: (0..<count).map { _ in byte() }, as: UTF8.self)
        }
    }

    static let jsonSnippets = [
        #"{"street":"s","tags":["a"]}"#, #"{"street":5}"#, "[1,2,", "null", #"{"a":{"b":{"c":[]}}}"#, "[[[[[]]]]]",
        #"{"circle":{"radius":"x"}}"#, "1e999", "\"\\ud800\"", "{}", "[]", #"[1,null,3]"#,
        "{\"latitude\":1,\"longitude\":2}",
    ]
    static let names = [
        "id", "name", "next", "children", "child", "items", "address", "location", "tags", "score",
        "flag", "when", "blob", "link", "uuid", "money", "ratio", "small", "big", "kind", "lazy", "map",
    ]
}

// MARK: Models the records are decoded into

struct Address: Codable { var street: String; var zip: String?; var tags: [String] }
enum Kind: String, Codable { case plain, rich }
enum Shape: Codable { case circle(radius: Double), square(side: Int) }

struct Child: CKCodable, Identifiable { var id: String; var name: String?; var score: Int? }

struct Everything: CKCodable, Identifiable {
    var id: String
    var name: String
    var small: Int8?
    var big: UInt64?
    var ratio: Float?
    var score: Double?
    var flag: Bool?
    var when: Date?
    var blob: Data?
    var link: URL?
    var uuid: UUID?
    var money: Decimal?
    var location: CloudLocation?
    var kind: Kind?
    var tags: [String]
    var items: Set<Int>
    var address: Address?
    var map: [String: Int]?
    var shape: Shape?
    var child: Child?
    var children: [Child]
    var lazy: CloudLazyReference<Child>?
}

struct Node: CKCodable, Identifiable {
    var id: String
    var next: [Node]
    var children: [Node]
}

final class ClassNode: CKCodable {
    let id: String
    var next: ClassNode?
    var cloudKitIdentifier: String { id }
    var cloudKitRecordType: String { "Node" }
}

// MARK: Records from bytes

func makeRecords(_ choices: inout Choices) -> [CloudRecord] {
    let zone = choices.below(4) == 0 ? CloudRecord.ZoneID(zoneName: "Z") : .default
    let types = ["Everything", "Node", "Child", "Other", "", "_x"]
    let count = 1 + choices.below(12)
    var records = (0..<count).map { index in
        var record = CloudRecord(
            recordType: types[choices.below(types.count)],
            id: CloudRecord.ID(recordName: "r\(index)", zoneID: zone))
        for _ in 0..<choices.below(16) {
            let name = choices.below(4) == 0 ? choices.string() : Choices.names[choices.below(Choices.names.count)]
            record.fields[name] = makeValue(&choices, zone: zone)
        }
        if choices.below(3) == 0 { record.systemFields = CloudRecord.SystemFields(changeTag: choices.string()) }
        return record
    }
    // Now and then a long chain of nodes below the root, to find costs and recursion that grow with depth.
    if choices.below(8) == 0 {
        let length = choices.below(256) * 16
        func link(_ index: Int) -> CloudValue {
            .referenceList([CloudReference(recordID: CloudRecord.ID(recordName: "c\(index)", zoneID: zone))])
        }
        for index in 0..<length {
            records.append(
                CloudRecord(
                    recordType: "Node", id: CloudRecord.ID(recordName: "c\(index)", zoneID: zone),
                    fields: [
                        "id": .string("c\(index)"), "next": index + 1 < length ? link(index + 1) : .referenceList([]),
                    ]))
        }
        records[0].fields["next"] = link(0)
    }
    return records
}

func makeValue(_ choices: inout Choices, zone: CloudRecord.ZoneID) -> CloudValue {
    func reference() -> CloudReference {
        CloudReference(
            recordID: CloudRecord.ID(
                recordName: "r\(choices.below(16))", zoneID: choices.below(8) == 0 ? .default : zone),
            action: CloudReference.Action.allCases[choices.below(3)])
    }
    func date() -> Date {
        choices.below(4) == 0
            ? Date(timeIntervalSinceReferenceDate: choices.double())
            : Date(timeIntervalSince1970: Double(choices.int64() % 10_000_000_000))
    }
    // Lists are usually short; now and then long, to find costs that grow with them.
    let length = choices.below(16) == 0 ? choices.below(256) * 64 : choices.below(8)
    switch choices.below(17) {
    case 0: return .string(choices.string())
    case 1: return .int64(choices.int64())
    case 2: return .double(choices.double())
    case 3: return .date(date())
    case 4: return .bytes(Data((0..<choices.below(32)).map { _ in choices.byte() }))
    case 5: return .reference(reference())
    case 6:
        return .asset(
            choices.below(2) == 0
                ? CloudAsset(data: Data([choices.byte()]))
                : CloudAsset(fileURL: URL(fileURLWithPath: "/nonexistent/\(choices.byte())")))
    case 7: return .location(CloudLocation(latitude: choices.double(), longitude: choices.double()))
    case 8: return .stringList((0..<length).map { _ in choices.string() })
    case 9: return .int64List((0..<length).map { _ in choices.int64() })
    case 10: return .doubleList((0..<length).map { _ in choices.double() })
    case 11: return .dateList((0..<length).map { _ in date() })
    case 12: return .bytesList((0..<length).map { _ in Data([choices.byte()]) })
    case 13: return .referenceList((0..<length).map { _ in reference() })
    case 14: return .assetList((0..<min(length, 4)).map { _ in CloudAsset(data: Data()) })
    case 15: return .locationList((0..<length).map { _ in CloudLocation(latitude: choices.double(), longitude: 0) })
    default: return .int64(Int64(choices.below(3)))
    }
}

// MARK: Decoding

func decodeEverything(_ records: [CloudRecord], options choices: inout Choices) {
    guard let root = records.first else { return }
    var decoder = CKRecordDecoder()
    decoder.maximumDepth = choices.below(2) == 0 ? 32 : 5_000
    decoder.maximumRecordCount = 10_000
    if choices.below(2) == 0 { decoder.missingReferenceStrategy = .throw }
    if choices.below(2) == 0 { decoder.nestedValueDecodingStrategy = .flattened(separator: "_") }
    if choices.below(2) == 0 { decoder.locationDecodingStrategy = .acceptingLegacyStrings }
    if choices.below(2) == 0 {
        decoder.nonFiniteFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    }

    _ = try? decoder.decode(Everything.self, from: root, records: records)
    _ = try? decoder.decode(Node.self, from: root, records: records)
    _ = try? decoder.decode(ClassNode.self, from: root, records: records)
    _ = try? decoder.decode(Child.self, from: root, records: records)

    // Through a database: resolution level by level, probing, schemas and the retry for unfetched records.
    let database = InMemoryCloudDatabase(maximumItemsPerRequest: 1 + choices.below(8))
    // On this thread, to the last job: libFuzzer checks for leaks as soon as the input returns (see
    // CallingThreadExecutor).
    CallingThreadExecutor.run { [decoder] in
        // The zone first, so that the records of a custom zone are stored too; the database refuses, record by
        // record, what CloudKit would refuse.
        _ = try? await database.modifyRecordZones(saving: [root.id.zoneID], deleting: [])
        _ = try? await database.saveRecords(records, savePolicy: .allKeys)
        let stored = await database.allRecords
        let start = stored.first { $0.id == root.id } ?? root
        _ = try? await decoder.decode(Everything.self, from: start, referenceDatabase: database)
        _ = try? await decoder.decode(Node.self, from: start, referenceDatabase: database)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var choices = Choices(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    let records = makeRecords(&choices)
    decodeEverything(records, options: &choices)
    // Printing records must never crash either (a NaN date's description traps in Foundation).
    _ = records.map { String(describing: $0.id) }
    return 0
}
