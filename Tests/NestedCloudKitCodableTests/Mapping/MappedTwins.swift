import Foundation
import NestedCloudKitCodable
import TestSupport

// The round-trip properties' models again, each with a record mapping written as the `@CloudRecord` macro writes
// it: a property per line, the common types through their own methods, nested models through the model methods,
// everything else through the generic ones. Each twin's record type is its Codable model's, so both must give the
// same records.

extension GeneratedModels {
    struct MappedChild: CKCodable, CloudRecordMappable, Identifiable, Equatable {
        var id: String
        var name: String
        var score: Int

        var cloudKitRecordType: String { "Child" }

        init(_ child: Child) {
            id = child.id
            name = child.name
            score = child.score
        }

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode(name, forKey: "name")
            try record.encode(score, forKey: "score")
        }

        init(fields record: CloudRecordReader) throws {
            id = try record.decode(String.self, forKey: "id")
            name = try record.decode(String.self, forKey: "name")
            score = try record.decode(Int.self, forKey: "score")
        }
    }

    struct MappedTree: CKCodable, CloudRecordMappable, Identifiable, Equatable {
        var id: String
        var label: String
        var branches: [MappedTree]

        var cloudKitRecordType: String { "Tree" }

        init(_ tree: Tree) {
            id = tree.id
            label = tree.label
            branches = tree.branches.map(MappedTree.init)
        }

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode(label, forKey: "label")
            try record.encode(branches, forKey: "branches")
        }

        init(fields record: CloudRecordReader) throws {
            id = try record.decode(String.self, forKey: "id")
            label = try record.decode(String.self, forKey: "label")
            branches = try record.decode([MappedTree].self, forKey: "branches")
        }
    }

    /// ``Sample`` with a record mapping: every row of the mapping table.
    struct MappedSample: CKCodable, CloudRecordMappable, Identifiable, Equatable {
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
        var child: MappedChild?
        var children: [MappedChild]
        var later: CloudLazyReference<MappedChild>?
        var tree: MappedTree

        var cloudKitRecordType: String { "Sample" }

        init(_ sample: Sample) {
            id = sample.id
            text = sample.text
            character = sample.character
            int = sample.int
            int8 = sample.int8
            uint32 = sample.uint32
            uint64 = sample.uint64
            flag = sample.flag
            double = sample.double
            float = sample.float
            date = sample.date
            data = sample.data
            uuid = sample.uuid
            link = sample.link
            decimal = sample.decimal
            location = sample.location
            color = sample.color
            shape = sample.shape
            strings = sample.strings
            numbers = sample.numbers
            optional = sample.optional
            nested = sample.nested
            dictionary = sample.dictionary
            child = sample.child.map(MappedChild.init)
            children = sample.children.map(MappedChild.init)
            later = sample.later.map { CloudLazyReference(recordID: $0.recordID) }
            tree = MappedTree(sample.tree)
        }

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode(text, forKey: "text")
            try record.encode(character, forKey: "character")
            try record.encode(int, forKey: "int")
            try record.encode(int8, forKey: "int8")
            try record.encode(uint32, forKey: "uint32")
            try record.encode(uint64, forKey: "uint64")
            try record.encode(flag, forKey: "flag")
            try record.encode(double, forKey: "double")
            try record.encode(float, forKey: "float")
            try record.encode(date, forKey: "date")
            try record.encode(data, forKey: "data")
            try record.encode(uuid, forKey: "uuid")
            try record.encode(link, forKey: "link")
            try record.encode(decimal, forKey: "decimal")
            try record.encode(location, forKey: "location")
            try record.encode(color, forKey: "color")
            try record.encode(shape, forKey: "shape")
            try record.encode(strings, forKey: "strings")
            try record.encode(numbers, forKey: "numbers")
            try record.encodeIfPresent(optional, forKey: "optional")
            try record.encode(nested, forKey: "nested")
            try record.encode(dictionary, forKey: "dictionary")
            try record.encodeIfPresent(child, forKey: "child")
            try record.encode(children, forKey: "children")
            try record.encodeIfPresent(later, forKey: "later")
            try record.encode(tree, forKey: "tree")
        }

        init(fields record: CloudRecordReader) throws {
            id = try record.decode(String.self, forKey: "id")
            text = try record.decode(String.self, forKey: "text")
            character = try record.decode(Character.self, forKey: "character")
            int = try record.decode(Int.self, forKey: "int")
            int8 = try record.decode(Int8.self, forKey: "int8")
            uint32 = try record.decode(UInt32.self, forKey: "uint32")
            uint64 = try record.decode(UInt64.self, forKey: "uint64")
            flag = try record.decode(Bool.self, forKey: "flag")
            double = try record.decode(Double.self, forKey: "double")
            float = try record.decode(Float.self, forKey: "float")
            date = try record.decode(Date.self, forKey: "date")
            data = try record.decode(Data.self, forKey: "data")
            uuid = try record.decode(UUID.self, forKey: "uuid")
            link = try record.decode(URL.self, forKey: "link")
            decimal = try record.decode(Decimal.self, forKey: "decimal")
            location = try record.decode(CloudLocation.self, forKey: "location")
            color = try record.decode(Color.self, forKey: "color")
            shape = try record.decode(Shape.self, forKey: "shape")
            strings = try record.decode([String].self, forKey: "strings")
            numbers = try record.decode(Set<Int>.self, forKey: "numbers")
            optional = try record.decodeIfPresent(String.self, forKey: "optional")
            nested = try record.decode(Nested.self, forKey: "nested")
            dictionary = try record.decode([String: Int].self, forKey: "dictionary")
            child = try record.decodeIfPresent(MappedChild.self, forKey: "child")
            children = try record.decode([MappedChild].self, forKey: "children")
            later = try record.decodeIfPresent(CloudLazyReference<MappedChild>.self, forKey: "later")
            tree = try record.decode(MappedTree.self, forKey: "tree")
        }
    }
}
