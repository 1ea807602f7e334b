import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// Nested `Codable` values that aren't records: embedded as JSON, or flattened into fields.
@Suite("Nested values")
struct NestedValueTests {
    struct Address: Codable {
        var street: String
        var city: String
        var geo: Geo?
    }

    struct Geo: Codable {
        var lat: Double
        var lon: Double
    }

    enum Shape: Codable {
        case circle(radius: Double)
        case square(side: Int)
    }

    struct Contact: CKEncodable {
        var cloudKitIdentifier: String { "c" }
        var address: Address
        var scores: [String: Int]
        var shape: Shape
        var seen: Date? = nil
        var avatar: Data? = nil
    }

    static let contact = Contact(
        address: Address(street: "742 Evergreen Terrace", city: "Springfield", geo: Geo(lat: 1.5, lon: -2)),
        scores: ["zed": 1, "amy": 2, "kim": 3],
        shape: .circle(radius: 2.5)
    )

    @Test func nestedValuesAreEmbeddedAsJSONWithSortedKeys() throws {
        try expectFields(
            of: Self.contact,
            equal: [
                "address": .string(
                    #"{"city":"Springfield","geo":{"lat":1.5,"lon":-2.0},"street":"742 Evergreen Terrace"}"#),
                "scores": .string(#"{"amy":2,"kim":3,"zed":1}"#),
                "shape": .string(#"{"circle":{"radius":2.5}}"#),
            ])
    }

    struct Timeline: CKEncodable {
        var cloudKitIdentifier: String { "t" }
        var entries: [Entry]
        struct Entry: Codable {
            var at: Date
            var payload: Data
            var link: URL
        }
    }

    @Test func embeddedJSONHoldsDatesAsMillisecondsAndBytesAsBase64() throws {
        let timeline = Timeline(entries: [
            .init(
                at: Date(timeIntervalSince1970: 1.5009), payload: Data([0xFF, 0x00]),
                link: URL(string: "https://x.example/a")!)
        ])
        try expectFields(
            of: timeline,
            equal: [
                "entries": .string(#"[{"at":1500,"link":"https://x.example/a","payload":"/wA="}]"#)
            ])
    }

    @Test func flattenedNestedValuesBecomePrefixedFields() throws {
        var encoder = CKRecordEncoder()
        encoder.nestedValueEncodingStrategy = .flattened(separator: "_")
        try expectFields(
            of: Self.contact, with: encoder,
            equal: [
                "address_street": .string("742 Evergreen Terrace"),
                "address_city": .string("Springfield"),
                "address_geo_lat": .double(1.5),
                "address_geo_lon": .double(-2),
                "scores_amy": .int64(2),
                "scores_kim": .int64(3),
                "scores_zed": .int64(1),
                "shape_circle_radius": .double(2.5),
            ])
    }

    struct Clash: CKEncodable {
        var cloudKitIdentifier: String { "clash" }
        var address: Address
        var address_city: String
    }

    @Test func flattenedFieldThatCollidesWithAnotherFieldIsAnError() throws {
        var encoder = CKRecordEncoder()
        encoder.nestedValueEncodingStrategy = .flattened(separator: "_")
        let value = Clash(address: Address(street: "s", city: "c"), address_city: "d")
        let error = try encodingError(of: value, with: encoder)
        #expect(error.code == .duplicateFieldName)
        #expect(error.path == ["address_city"])
        #expect(error.field == "address_city")
        #expect(error.recordID == CloudRecord.ID(recordName: "clash"))
    }

    struct AssetInside: CKEncodable {
        var cloudKitIdentifier: String { "ai" }
        var box: Box
        struct Box: Codable { var file: CloudAsset }
    }

    @Test func assetInsideAnEmbeddedValueIsAnError() throws {
        let error = try encodingError(
            of: AssetInside(box: .init(file: CloudAsset(fileURL: URL(fileURLWithPath: "/tmp/x")))))
        #expect(error.code == .assetInEmbeddedValue)
        #expect(error.path == ["box", "file"])
        #expect(error.field == "box")
    }

    struct Deep: CKEncodable {
        var cloudKitIdentifier: String { "deep" }
        var values: [String: [Double]]
    }

    @Test func nonFiniteNumberDeepInsideAnEmbeddedValueNamesItsFullPath() throws {
        let error = try encodingError(of: Deep(values: ["a": [1, .nan]]))
        #expect(error.code == .nonFiniteNumber)
        #expect(error.path == ["values", "a", "Index 1"])
        #expect(error.field == "values")
    }
}
