import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

/// A model declares which of its references is its record's parent (``CloudFieldOptions/parentField``), and the
/// encoder sets the record's parent from it, on the `Codable` path and through a record mapping alike.
@Suite("Parents for sharing")
struct ParentFieldTests {
    static let zone = CloudRecord.ZoneID(zoneName: "Lists")

    struct ShoppingList: CKCodable, Identifiable, Equatable {
        var id: String
        var name: String
    }

    struct Item: CKCodable, Identifiable, Equatable {
        var id: String
        var name: String
        var list: CloudLazyReference<ShoppingList>?
        static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, parent: .list)
    }

    /// ``Item`` through a record mapping, with the same options.
    struct MappedItem: CKCodable, CloudRecordMappable, Identifiable, Equatable {
        var id: String
        var name: String
        var list: CloudLazyReference<ShoppingList>?
        var cloudKitRecordType: String { "Item" }
        static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, parent: .list)

        init(_ item: Item) {
            id = item.id
            name = item.name
            list = item.list
        }

        func encodeFields(to record: inout CloudRecordWriter) throws {
            try record.encode(id, forKey: "id")
            try record.encode(name, forKey: "name")
            try record.encodeIfPresent(list, forKey: "list")
        }

        init(fields record: CloudRecordReader) throws {
            id = try record.decode(String.self, forKey: "id")
            name = try record.decode(String.self, forKey: "name")
            list = try record.decodeIfPresent(CloudLazyReference<ShoppingList>.self, forKey: "list")
        }
    }

    /// A nested model as the parent: the list's record is encoded too, before the item's.
    struct ItemInList: CKCodable, Identifiable, Equatable {
        var id: String
        var list: ShoppingList
        var cloudKitRecordType: String { "Item" }
        static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, parent: .list)
    }

    struct ItemOfLists: CKCodable, Identifiable {
        var id: String
        var lists: [ShoppingList]
        static let cloudKitFieldOptions = CloudFieldOptions(keyedBy: CodingKeys.self, parent: .lists)
    }

    struct Misspelt: CKCodable, Identifiable {
        var id: String
        var list: CloudLazyReference<ShoppingList>
        static let cloudKitFieldOptions = CloudFieldOptions(parentField: "lsit")
    }

    var encoder: CKRecordEncoder {
        var encoder = CKRecordEncoder()
        encoder.zoneID = Self.zone
        return encoder
    }

    let listID = CloudRecord.ID(recordName: "groceries", zoneID: zone)

    @Test func theParentIsTheRecordTheParentFieldReferences() throws {
        let item = Item(id: "milk", name: "Milk", list: CloudLazyReference(recordID: listID))
        let record = try #require(try encoder.encodeRecords(item).last)
        #expect(record.parentID == listID)
        // The field stays: the model reads it back.
        #expect(record["list"] == .reference(CloudReference(recordID: listID)))
    }

    @Test func aMappingGivesTheSameParentAsCodable() throws {
        let item = Item(id: "milk", name: "Milk", list: CloudLazyReference(recordID: listID))
        let codable = try encoder.encodeRecords(item)
        let mapped = try encoder.encodeRecords(MappedItem(item))
        #expect(mapped == codable)
        #expect(mapped.last?.parentID == listID)
    }

    @Test func aNestedModelIsAParentEncodedFirst() throws {
        let records = try encoder.encodeRecords(ItemInList(id: "milk", list: ShoppingList(id: "groceries", name: "G")))
        #expect(records.map(\.id.recordName) == ["groceries", "milk"])
        #expect(records.last?.parentID == listID)
        #expect(records.first?.parentID == nil)
    }

    @Test func noReferenceMeansNoParent() throws {
        let records = try encoder.encodeRecords(Item(id: "milk", name: "Milk", list: nil))
        #expect(records.last?.parentID == nil)
    }

    @Test func aParentFieldHoldingAListIsRefused() throws {
        let error = try encodingError(
            of: ItemOfLists(id: "milk", lists: [ShoppingList(id: "a", name: "A")]), with: encoder)
        #expect(error.code == .invalidParentField)
        #expect(error.field == "lists")
        #expect(error.recordID == CloudRecord.ID(recordName: "milk", zoneID: Self.zone))
        #expect(error.path == ["lists"])
    }

    @Test func aMisspeltParentFieldIsAnError() throws {
        let error = try encodingError(
            of: Misspelt(id: "milk", list: CloudLazyReference(recordID: listID)), with: encoder)
        #expect(error.code == .unknownFieldOption)
    }

    @Test func theParentSurvivesASaveAndTheModelDecodes() async throws {
        let database = InMemoryCloudDatabase()
        _ = try await database.modifyRecordZones(saving: [Self.zone], deleting: [])
        let item = Item(id: "milk", name: "Milk", list: CloudLazyReference(recordID: listID))
        _ = try await database.saveRecords(try encoder.encodeRecords(item))
        let stored = try await database.record(for: CloudRecord.ID(recordName: "milk", zoneID: Self.zone))
        #expect(stored.parentID == listID)
        #expect(try CKRecordDecoder().decode(Item.self, from: stored) == item)
    }
}
