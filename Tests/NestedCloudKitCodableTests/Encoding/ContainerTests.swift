import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// Hand-written `encode(to:)` implementations: nested containers, super encoders, single values.
@Suite("Custom encode(to:)")
struct ContainerTests {
    struct Measurement: CKEncodable {
        var cloudKitIdentifier: String { "m" }
        var kind: String
        var lower: Double
        var upper: Double
        var samples: [Int]

        enum CodingKeys: String, CodingKey { case kind, range, samples, history }
        enum RangeKeys: String, CodingKey { case lower, upper }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(kind, forKey: .kind)
            var range = container.nestedContainer(keyedBy: RangeKeys.self, forKey: .range)
            try range.encode(lower, forKey: .lower)
            var list = container.nestedUnkeyedContainer(forKey: .samples)
            for sample in samples { try list.encode(sample) }
            // Written after the nested container was made: nested containers are read when the record is done.
            try range.encode(upper, forKey: .upper)
            var history = container.nestedUnkeyedContainer(forKey: .history)
            var entry = history.nestedContainer(keyedBy: RangeKeys.self)
            try entry.encode(0, forKey: .lower)
        }
    }

    @Test func nestedContainersBecomeEmbeddedValuesAndLists() throws {
        try expectFields(
            of: Measurement(kind: "temp", lower: -1.5, upper: 30, samples: [4, 5]),
            equal: [
                "kind": .string("temp"),
                "range": .string(#"{"lower":-1.5,"upper":30.0}"#),
                "samples": .int64List([4, 5]),
                "history": .string(#"[{"lower":0}]"#),
            ])
    }

    class Vehicle: Encodable {
        var wheels = 4
    }

    final class Car: Vehicle, CKRecordRepresentable {
        var cloudKitIdentifier: String { "car" }
        var brand = "Volvo"
        enum CodingKeys: String, CodingKey { case brand }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(brand, forKey: .brand)
            try super.encode(to: container.superEncoder())
        }
    }

    @Test func superEncoderWritesTheSuperclassUnderSuper() throws {
        try expectFields(of: Car(), equal: ["brand": .string("Volvo"), "super": .string(#"{"wheels":4}"#)])
        var encoder = CKRecordEncoder()
        encoder.nestedValueEncodingStrategy = .flattened(separator: "_")
        try expectFields(of: Car(), with: encoder, equal: ["brand": .string("Volvo"), "super_wheels": .int64(4)])
    }

    final class Truck: Vehicle, CKRecordRepresentable {
        var cloudKitIdentifier: String { "truck" }
        var load = 12.5
        enum CodingKeys: String, CodingKey { case load }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(load, forKey: .load)
            try super.encode(to: encoder)
        }
    }

    @Test func superclassEncodedIntoTheSameEncoderSharesTheRecord() throws {
        try expectFields(of: Truck(), equal: ["load": .double(12.5), "wheels": .int64(4)])
    }

    struct Inner: Codable {
        var title: String
        var count: Int
    }

    struct Tagged: CKEncodable {
        var cloudKitIdentifier: String { "tagged" }
        var inner: Inner
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(inner)
        }
    }

    @Test func singleValueWrapperGivesTheRecordItsInnerValuesFields() throws {
        try expectFields(
            of: Tagged(inner: Inner(title: "t", count: 2)), equal: ["title": .string("t"), "count": .int64(2)])
    }

    struct Scalar: CKEncodable {
        var cloudKitIdentifier: String { "scalar" }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(42)
        }
    }

    struct Listed: CKEncodable {
        var cloudKitIdentifier: String { "listed" }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(42)
        }
    }

    @Test func recordThatIsNotKeyedIsAnError() throws {
        let scalar = try encodingError(of: Scalar())
        #expect(scalar.code == .recordNotKeyed)
        #expect(scalar.recordID == CloudRecord.ID(recordName: "scalar"))
        let listed = try encodingError(of: Listed())
        #expect(listed.code == .recordNotKeyed)
    }

    struct Partial: CKEncodable {
        var cloudKitIdentifier: String { "partial" }
        var name = "kept"
        var secret = "dropped"
        var cache: [Int] = [1]
        func ignoredProperties() -> [String] { ["secret", "cache"] }
    }

    @Test func ignoredPropertiesAreNotStored() throws {
        try expectFields(of: Partial(), equal: ["name": .string("kept")])
    }

    struct UserInfoReader: CKEncodable {
        static let key = CodingUserInfoKey(rawValue: "unit")!
        var cloudKitIdentifier: String { "u" }
        enum CodingKeys: CodingKey { case unit }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(encoder.userInfo[Self.key] as? String ?? "none", forKey: .unit)
        }
    }

    @Test func userInfoReachesTheModel() throws {
        var encoder = CKRecordEncoder()
        encoder.userInfo[UserInfoReader.key] = "cm"
        try expectFields(of: UserInfoReader(), with: encoder, equal: ["unit": .string("cm")])
    }
}
