import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// The encoder checks the first record of a type in full and the next ones against it (the same keys in the same
/// order need no second check), and orders a root's nested records without walking them when the root alone has
/// references. Records of one type that differ, or references that don't follow the nested values, must still get
/// every check and the order the walk gives.
@Suite("Records of one type")
struct RecordsOfOneTypeTests {
    /// A model whose keys depend on its value, written through a mapping.
    struct Shape: CKCodable, CloudRecordEncodable, Identifiable {
        enum Kind: Codable { case circle, rectangle, repeatsWidth, badName, reservedName }
        var id: String
        var kind: Kind

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            switch kind {
            case .circle:
                try record.encode(1, forKey: "radius")
            case .rectangle:
                try record.encode(2, forKey: "width")
                try record.encode(3, forKey: "height")
            case .repeatsWidth:
                try record.encode(2, forKey: "width")
                try record.encode(3, forKey: "height")
                try record.encode(4, forKey: "width")
            case .badName:
                try record.encode(2, forKey: "wid th")
            case .reservedName:
                try record.encode(2, forKey: "recordType")
            }
        }
    }

    /// A mapped root holding a list of mapped children: the root of most tests here.
    struct Parent<Child: CKCodable & CloudRecordEncodable>: CKCodable, CloudRecordEncodable, Identifiable {
        var id = "parent"
        var children: [Child]

        // The default record type is the type's name, which for a generic type isn't a valid one.
        var cloudKitRecordType: String { "Parent" }

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode(children, forKey: "children")
        }
    }

    @Test func recordsOfOneTypeWithOtherKeysGetTheirOwnFields() throws {
        let parent = Parent(children: [
            Shape(id: "a", kind: .rectangle), Shape(id: "b", kind: .circle), Shape(id: "c", kind: .rectangle),
        ])
        let records = try CKRecordEncoder().encodeRecords(parent)
        #expect(records.map(\.id.recordName) == ["a", "b", "c", "parent"])
        #expect(records[0].fields == ["id": .string("a"), "width": .int64(2), "height": .int64(3)])
        #expect(records[1].fields == ["id": .string("b"), "radius": .int64(1)])
        #expect(records[2].fields == ["id": .string("c"), "width": .int64(2), "height": .int64(3)])
    }

    /// A mapped root that catches the errors of two lists: one whose field name is invalid (found after its models
    /// are named), one whose second model has no valid record name.
    struct CatchesFailedLists: CKCodable, CloudRecordEncodable, Identifiable {
        var id = "root"
        var failsAtItsName: [Shape]
        var failsAtItsSecondModel: [Shape]
        var kept: [Shape]

        var cloudKitRecordType: String { "Root" }

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            #expect(throws: CKCodableError.self) { try record.encode(failsAtItsName, forKey: "bad name") }
            #expect(throws: CKCodableError.self) {
                try record.encode(failsAtItsSecondModel, forKey: "second")
            }
            try record.encode(kept, forKey: "kept")
        }
    }

    @Test func theModelsOfAListWhoseFieldFailedBecomeNoRecords() throws {
        let root = CatchesFailedLists(
            failsAtItsName: [Shape(id: "a", kind: .circle)],
            failsAtItsSecondModel: [Shape(id: "b", kind: .circle), Shape(id: "", kind: .circle)],
            kept: [Shape(id: "c", kind: .circle), Shape(id: "d", kind: .circle)])
        let records = try CKRecordEncoder().encodeRecords(root)
        #expect(records.map(\.id.recordName) == ["c", "d", "root"])
        #expect(
            records[2].fields == [
                "id": .string("root"),
                "kept": .referenceList([
                    CloudReference(recordID: CloudRecord.ID(recordName: "c")),
                    CloudReference(recordID: CloudRecord.ID(recordName: "d")),
                ]),
            ])
    }

    @Test func aKeyWrittenTwiceAfterTheKeysOfTheLastRecordIsAnError() throws {
        let parent = Parent(children: [Shape(id: "a", kind: .rectangle), Shape(id: "b", kind: .repeatsWidth)])
        let error = try encodingError(of: parent)
        #expect(error.code == .duplicateFieldName)
        #expect(error.path == ["children", "Index 1", "width"])
        #expect(error.recordID == CloudRecord.ID(recordName: "b"))
    }

    @Test(arguments: [
        (Shape.Kind.badName, CKCodableError.Code.invalidFieldName, "wid th"),
        (.reservedName, .reservedFieldName, "recordType"),
    ])
    func aFieldNameTheLastRecordOfTheTypeDidntHaveIsChecked(
        kind: Shape.Kind, code: CKCodableError.Code, field: String
    ) throws {
        let parent = Parent(children: [Shape(id: "a", kind: .rectangle), Shape(id: "b", kind: kind)])
        let error = try encodingError(of: parent)
        #expect(error.code == code)
        #expect(error.field == field)
        #expect(error.recordID == CloudRecord.ID(recordName: "b"))
        #expect(error.path.prefix(2) == ["children", "Index 1"])
    }

    /// The encoder remembers a type's last record across calls (values are often saved one by one): a value
    /// encoded in a call of its own is checked against the last one as fully as one in the same graph.
    @Test func aValueEncodedOnItsOwnAfterAnotherOfItsTypeIsCheckedInFull() throws {
        let encoder = CKRecordEncoder()
        _ = try encoder.encodeRecords(Shape(id: "a", kind: .rectangle))
        let repeated = try encodingError(of: Shape(id: "b", kind: .repeatsWidth))
        #expect(repeated.code == .duplicateFieldName)
        #expect(repeated.path == ["width"])

        _ = try encoder.encodeRecords(Shape(id: "a", kind: .rectangle))
        let invalid = try encodingError(of: Shape(id: "c", kind: .badName))
        #expect(invalid.code == .invalidFieldName)

        _ = try encoder.encodeRecords(Shape(id: "a", kind: .circle))
        let records = try encoder.encodeRecords(Shape(id: "d", kind: .rectangle))
        #expect(records.map(\.fields) == [["id": .string("d"), "width": .int64(2), "height": .int64(3)]])
    }

    /// A `Codable` model whose second value writes a reserved field name where the first wrote a valid one.
    struct Tagged: CKCodable, Identifiable {
        var id: String
        var usesReservedName: Bool

        enum Keys: String, CodingKey { case id, label, recordType }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(id, forKey: .id)
            try container.encode("x", forKey: usesReservedName ? .recordType : .label)
        }

        init(id: String, usesReservedName: Bool) {
            self.id = id
            self.usesReservedName = usesReservedName
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            id = try container.decode(String.self, forKey: .id)
            usesReservedName = container.contains(.recordType)
        }
    }

    struct Board: CKCodable, Identifiable {
        var id = "board"
        var tags: [Tagged]
    }

    @Test func aCodableModelsFieldNamesAreCheckedForEveryRecordOfItsType() throws {
        let board = Board(tags: [Tagged(id: "a", usesReservedName: false), Tagged(id: "b", usesReservedName: true)])
        let error = try encodingError(of: board)
        #expect(error.code == .reservedFieldName)
        #expect(error.recordID == CloudRecord.ID(recordName: "b"))
    }

    /// A nested value whose record type is set per value.
    struct Typed: CKCodable, CloudRecordEncodable, Identifiable {
        var id: String
        var cloudKitRecordType: String

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
        }
    }

    @Test func aRecordTypeEqualToTheLastOnlyAsUnicodeIsChecked() throws {
        // "\u{212A}ey" (a Kelvin sign) is canonically equivalent to "Key", so `==` takes them for one string.
        let parent = Parent(children: [
            Typed(id: "a", cloudKitRecordType: "Key"), Typed(id: "b", cloudKitRecordType: "\u{212A}ey"),
        ])
        let error = try encodingError(of: parent)
        #expect(error.code == .invalidRecordType)
    }

    // MARK: Order

    /// A root that references one of its nested values directly, before the list that holds them.
    struct Pinned: CKCodable, CloudRecordEncodable, Identifiable {
        var id = "pinned"
        var pin: CloudReference
        var shapes: [Shape]

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode(pin, forKey: "pin")
            try record.encode(shapes, forKey: "shapes")
        }
    }

    @Test func aDirectReferenceToANestedRecordPutsItFirst() throws {
        let pinned = Pinned(
            pin: CloudReference(recordID: CloudRecord.ID(recordName: "b")),
            shapes: [Shape(id: "a", kind: .circle), Shape(id: "b", kind: .circle)])
        let records = try CKRecordEncoder().encodeRecords(pinned)
        #expect(records.map(\.id.recordName) == ["b", "a", "pinned"])
    }

    /// A nested value that references a sibling directly.
    struct Linked: CKCodable, CloudRecordEncodable, Identifiable {
        var id: String
        var next: CloudReference?

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encodeIfPresent(next, forKey: "next")
        }
    }

    @Test func aNestedRecordThatReferencesASiblingComesAfterIt() throws {
        let parent = Parent(children: [
            Linked(id: "a", next: CloudReference(recordID: CloudRecord.ID(recordName: "b"))), Linked(id: "b"),
        ])
        let records = try CKRecordEncoder().encodeRecords(parent)
        #expect(records.map(\.id.recordName) == ["b", "a", "parent"])
    }
}
