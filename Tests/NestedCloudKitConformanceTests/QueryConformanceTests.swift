import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// Every comparator of ``CloudQuery``, on every backend: the in-memory and SQLite databases and the local store
/// evaluate the predicate themselves; the Web Services client sends it as filters, which the emulator reads back
/// into the same predicate. Each condition must find the same records everywhere.
@Suite("Query conformance")
struct QueryConformanceTests {
    private static let sanFrancisco = CloudLocation(latitude: 37.7749, longitude: -122.4194)

    /// Four places: two coffee shops named "Blue...", a bakery about 1.5 km from the first, and one with only a
    /// name.
    private static let places: [CloudRecord] = [
        record(
            "Place", "a",
            [
                "name": .string("Blue Bottle Coffee"), "rating": .int64(5), "price": .double(3.5),
                "tags": .stringList(["coffee", "wifi"]), "spot": .location(sanFrancisco),
                "owner": reference("x", .deleteSelf),
            ]),
        record(
            "Place", "b",
            [
                "name": .string("Bluestone Lane"), "rating": .int64(4), "price": .double(4),
                "tags": .stringList(["coffee", "brunch"]),
                "spot": .location(CloudLocation(latitude: 40.7128, longitude: -74.0060)), "owner": reference("y"),
            ]),
        record(
            "Place", "c",
            [
                "name": .string("Tartine Bakery"), "rating": .int64(3), "tags": .stringList(["bakery"]),
                "spot": .location(CloudLocation(latitude: 37.7614, longitude: -122.4241)),
            ]),
        record("Place", "d", ["name": .string("Zuni")]),
    ]

    /// A condition, what it finds (by record name), and what it shows.
    private static let conditions: [(CloudQuery.Predicate, [String], String)] = [
        (.compare(field: "rating", .equals, .int64(4)), ["b"], "equals"),
        (.compare(field: "price", .equals, .int64(4)), ["b"], "an integer equals a double of the same value"),
        (
            .compare(field: "rating", .notEquals, .int64(4)), ["a", "c", "d"],
            "notEquals, a record without the field too"
        ),
        (.compare(field: "rating", .lessThan, .int64(5)), ["b", "c"], "lessThan"),
        (.compare(field: "rating", .lessThanOrEquals, .int64(4)), ["b", "c"], "lessThanOrEquals"),
        (.compare(field: "price", .greaterThan, .double(3.5)), ["b"], "greaterThan"),
        (.compare(field: "rating", .greaterThanOrEquals, .double(4)), ["a", "b"], "greaterThanOrEquals a double"),
        (.compare(field: "rating", .in, .int64List([3, 5])), ["a", "c"], "in"),
        (.compare(field: "rating", .notIn, .int64List([3, 5])), ["b", "d"], "notIn"),
        (.compare(field: "name", .beginsWith, .string("Blue")), ["a", "b"], "beginsWith"),
        (.compare(field: "name", .notBeginsWith, .string("Blue")), ["c", "d"], "notBeginsWith"),
        (.compare(field: "name", .containsAllTokens, .string("coffee, BLUE")), ["a"], "containsAllTokens"),
        (.compare(field: "name", .containsAnyTokens, .string("bakery lane")), ["b", "c"], "containsAnyTokens"),
        (.compare(field: "tags", .listContains, .string("coffee")), ["a", "b"], "listContains"),
        (.compare(field: "tags", .notListContains, .string("coffee")), ["c", "d"], "notListContains"),
        (.compare(field: "tags", .listContainsAny, .stringList(["brunch", "bakery"])), ["b", "c"], "listContainsAny"),
        (
            .compare(field: "tags", .notListContainsAny, .stringList(["brunch", "bakery"])), ["a", "d"],
            "notListContainsAny"
        ),
        (.compare(field: "tags", .listContainsAll, .stringList(["wifi", "coffee"])), ["a"], "listContainsAll"),
        (
            .compare(field: "tags", .notListContainsAll, .stringList(["wifi", "coffee"])), ["b", "c", "d"],
            "notListContainsAll"
        ),
        (.compare(field: "tags", .listMemberBeginsWith, .string("bak")), ["c"], "listMemberBeginsWith"),
        (
            .compare(field: "tags", .notListMemberBeginsWith, .string("bak")), ["a", "b", "d"],
            "notListMemberBeginsWith"
        ),
        (.equals(field: "tags", value: .string("wifi")), ["a"], "equals on a list field is membership"),
        (.equals(field: "owner", value: reference("x")), ["a"], "a reference equals by record, whatever its action"),
        (.references(CloudRecord.ID(recordName: "y"), in: "owner"), ["b"], "references"),
        (.near(field: "spot", location: sanFrancisco, radius: 2_000), ["a", "c"], "near, 2 km"),
        (.near(field: "spot", location: sanFrancisco, radius: 100), ["a"], "near, 100 m"),
        (.compare(field: "recordID", .in, .stringList(["a", "c"])), ["a", "c"], "the record name in a list"),
        (.compare(field: "recordID", .lessThan, .string("b")), ["a"], "the record name in order"),
        (
            .and([
                .compare(field: "tags", .listContains, .string("coffee")),
                .compare(field: "rating", .greaterThan, .int64(4)),
            ]),
            ["a"], "and"
        ),
    ]

    @Test(arguments: DatabaseBackend.all)
    func everyComparatorFindsTheSameRecords(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        _ = try await database.saveRecords([record("Owner", "x", [:]), record("Owner", "y", [:])])
        _ = try await database.saveRecords(Self.places)

        for (predicate, expected, what) in Self.conditions {
            let page = try await database.records(
                matching: CloudQuery(recordType: "Place", predicate: predicate), inZoneWith: .default)
            #expect(page.matchResults.map(\.0.recordName).sorted() == expected, "\(what): \(predicate)")
        }
    }

    @Test(arguments: DatabaseBackend.servers)
    func queriesCompareTheUsersWhoCreatedAndLastSavedARecord(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        let saved = try await database.saveRecords(Self.places)
        let user = try #require(saved.first?.systemFields?.creatorUserRecordName)

        for (field, comparator, expected) in [
            (CloudQuery.SystemField.creatorUserRecordName, CloudQuery.Comparator.equals, ["a", "b", "c", "d"]),
            (.lastModifiedUserRecordName, .notEquals, []),
        ] {
            let page = try await database.records(
                matching: CloudQuery(
                    recordType: "Place", predicate: .compare(field: field.fieldName, comparator, .string(user))),
                inZoneWith: .default)
            #expect(page.matchResults.map(\.0.recordName).sorted() == expected, "\(field)")
        }
    }

    @Test(arguments: DatabaseBackend.all)
    func aSortOnAReferenceOrdersByRecordName(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        _ = try await database.saveRecords([record("Owner", "x", [:]), record("Owner", "y", [:])])
        _ = try await database.saveRecords(Self.places)

        let page = try await database.records(
            matching: CloudQuery(
                recordType: "Place", predicate: .compare(field: "rating", .greaterThan, .int64(3)),
                sortDescriptors: [CloudQuery.SortDescriptor(field: "owner", ascending: false)]),
            inZoneWith: .default)
        #expect(page.matchResults.map(\.0.recordName) == ["b", "a"])
    }

    /// A cursor holds the position of its page's last record, not a count: records saved and deleted between two
    /// pages neither shift the next page nor repeat a record, on every backend (the emulator's continuation
    /// marker included).
    @Test(arguments: DatabaseBackend.all)
    func aPageContinuesAfterItsLastRecordWhateverChangedBefore(backend: DatabaseBackend) async throws {
        let database = try await backend.makeDatabase()
        func ranked(_ rank: Int) -> CloudRecord {
            record("Item", String(format: "n%02d", rank), ["rank": .int64(Int64(rank))])
        }
        _ = try await database.saveRecords((1...10).map(ranked))
        let query = CloudQuery(recordType: "Item", sortDescriptors: [CloudQuery.SortDescriptor(field: "rank")])

        let first = try await database.records(matching: query, inZoneWith: .default, desiredKeys: nil, resultsLimit: 4)
        #expect(first.matchResults.map(\.0.recordName) == ["n01", "n02", "n03", "n04"])
        let cursor = try #require(first.queryCursor)
        // Before the position a new first record, which an offset would count, repeating n04; after it one deleted
        // and one added.
        _ = try await database.saveRecords([ranked(0), ranked(11)])
        try await database.deleteRecord(withID: CloudRecord.ID(recordName: "n06"))

        let second = try await database.records(continuingMatchFrom: cursor, desiredKeys: nil, resultsLimit: 4)
        #expect(second.matchResults.map(\.0.recordName) == ["n05", "n07", "n08", "n09"])
        let third = try await database.records(
            continuingMatchFrom: try #require(second.queryCursor), desiredKeys: nil, resultsLimit: 4)
        #expect(third.matchResults.map(\.0.recordName) == ["n10", "n11"])
        #expect(third.queryCursor == nil)
    }
}
