import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// CloudKit's rules, checked before anything reaches CloudKit.
@Suite("Validation")
struct ValidationTests {
    struct Named: CKEncodable {
        var cloudKitIdentifier: String
        var value = 1
    }

    @Test(arguments: ["", String(repeating: "a", count: 256), "café", "_private", "nul\u{0}"])
    func recordNameCloudKitRejectsIsAnError(name: String) throws {
        let error = try encodingError(of: Named(cloudKitIdentifier: name))
        #expect(error.code == .invalidRecordName)
        #expect(error.path == [])
    }

    @Test(arguments: ["a", String(repeating: "z", count: 255), "with space", "a_b-c.d", "1st"])
    func recordNameCloudKitAcceptsIsKept(name: String) throws {
        #expect(try records(of: Named(cloudKitIdentifier: name)).last?.id.recordName == name)
    }

    struct Parent: CKEncodable {
        var cloudKitIdentifier: String { "parent" }
        var children: [Named]
    }

    @Test func invalidRecordNameOfANestedValueNamesItsPath() throws {
        let error = try encodingError(
            of: Parent(children: [Named(cloudKitIdentifier: "ok"), Named(cloudKitIdentifier: "_bad")]))
        #expect(error.code == .invalidRecordName)
        #expect(error.path == ["children", "Index 1"])
        // The nested value has no valid ID of its own: the error names the field of the record that holds it.
        #expect(error.recordID == CloudRecord.ID(recordName: "parent"))
        #expect(error.field == "children")
    }

    struct Generic<T: Codable>: CKEncodable {
        var cloudKitIdentifier: String { "g" }
        var value: T
    }

    @Test func defaultRecordTypeOfAGenericTypeIsAnErrorThatSaysToNameIt() throws {
        let error = try encodingError(of: Generic(value: 1))
        #expect(error.code == .invalidRecordType)
        #expect(error.recoverySuggestion?.contains("cloudKitRecordType") == true)
    }

    struct Typed: CKEncodable {
        var cloudKitIdentifier: String { "t" }
        var cloudKitRecordType: String
    }

    @Test(arguments: ["", "1Type", "_Type", "Type-Name", String(repeating: "T", count: 256)])
    func recordTypeCloudKitRejectsIsAnError(type: String) throws {
        #expect(try encodingError(of: Typed(cloudKitRecordType: type)).code == .invalidRecordType)
    }

    struct BadField: CKEncodable {
        var cloudKitIdentifier: String { "bad" }
        var name: String
        enum CodingKeys: String, CodingKey { case name = "first name" }
    }

    @Test func invalidFieldNameIsAnErrorNamingTheField() throws {
        let error = try encodingError(of: BadField(name: "x"))
        #expect(error.code == .invalidFieldName)
        #expect(error.path == ["first name"])
        #expect(error.field == "first name")
        #expect(error.recordID == CloudRecord.ID(recordName: "bad"))
        #expect(error.recoverySuggestion?.contains("CodingKeys") == true)
    }

    struct Reserved: CKEncodable {
        var cloudKitIdentifier: String { "reserved" }
        var recordType: String
        var creationDate: Date? = nil
    }

    @Test func fieldNamedLikeACKRecordPropertyIsAnError() throws {
        let error = try encodingError(of: Reserved(recordType: "x"))
        #expect(error.code == .reservedFieldName)
        #expect(error.path == ["recordType"])
        #expect(error.field == "recordType")
    }

    struct AnyField: CKEncodable {
        var cloudKitIdentifier: String { "any" }
        var name: String
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: NamedKey.self)
            try container.encode(1, forKey: NamedKey(stringValue: name))
        }
        struct NamedKey: CodingKey {
            var stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }
    }

    @Test(arguments: [
        "recordID", "recordType", "recordChangeTag", "creationDate", "creatorUserRecordID", "modificationDate",
        "lastModifiedUserRecordID", "parent", "share", "encryptedValues", "allKeys", "allTokens", "changedKeys",
        "description", "debugDescription",
    ])
    func everyCKRecordPropertyNameIsReserved(name: String) throws {
        #expect(try encodingError(of: AnyField(name: name)).code == .reservedFieldName)
    }

    @Test(arguments: ["recordId", "shares", "parents", "Description", "allkeys", "title"])
    func namesThatOnlyResembleReservedOnesAreAccepted(name: String) throws {
        #expect(try records(of: AnyField(name: name)).last?[name] == .int64(1))
    }

    @Test func nilValueInAReservedFieldIsStillAnError() throws {
        struct Shadow: CKEncodable {
            var cloudKitIdentifier: String { "shadow" }
            var recordID: String?
        }
        #expect(try encodingError(of: Shadow()).code == .reservedFieldName)
    }

    struct Heavy: CKEncodable {
        var cloudKitIdentifier: String { "heavy" }
        var parts: [String]
    }

    @Test func recordOverOneMegabyteOfFieldDataIsAnErrorNamingTheLargestFields() throws {
        let part = String(repeating: "x", count: 200_000)
        #expect(try records(of: Heavy(parts: Array(repeating: part, count: 4))).count == 1)
        let error = try encodingError(of: Heavy(parts: Array(repeating: part, count: 6)))
        #expect(error.code == .recordTooLarge)
        #expect(error.recordID == CloudRecord.ID(recordName: "heavy"))
        #expect(error.reason.contains("parts (1200005 bytes)"))
    }

    @Test func assetsDoNotCountTowardTheRecordSize() throws {
        struct Album: CKEncodable {
            var cloudKitIdentifier: String { "album" }
            var photos: [Data]
        }
        let photos = Array(repeating: Data(count: 600_000), count: 3)
        var encoder = CKRecordEncoder()
        encoder.dataEncodingStrategy = .assets(forFields: ["photos"])
        let root = try #require(try records(of: Album(photos: photos), with: encoder).last)
        #expect(root["photos"]?.kind == .assetList)
    }

    @Test func errorDescriptionSaysWhatWhereAndHowToFix() throws {
        let error = try encodingError(of: Parent(children: [Named(cloudKitIdentifier: "_bad")]))
        #expect(
            error.description == """
                The record name "_bad" of a Named can't be used: it starts with an underscore, which CloudKit reserves \
                (at children[0], record parent, field "children"). Make cloudKitIdentifier (by default the value's id) return an ASCII name of 1 to 255 \
                characters that doesn't start with an underscore.
                """)
    }
}
