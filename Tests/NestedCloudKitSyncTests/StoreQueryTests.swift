import Foundation
import GRDB
import NestedCloudKitCodable
import NestedCloudKitServer
import Testing

@testable import NestedCloudKitSync

@Suite("Store: queries in SQLite")
struct StoreQueryTests {
    static let day: TimeInterval = 86_400

    /// Six chores with every kind of field, saved in one store.
    static func store() async throws -> SyncStore {
        let store = try SyncStore.inMemory()
        let project = CloudLazyReference<Project>(
            recordID: CloudRecord.ID(recordName: "p1", zoneID: SyncStore.defaultZoneID))
        let chores = [
            Chore(
                id: "c1", title: "Buy milk", priority: 2, score: 1.5, due: Date(timeIntervalSince1970: 3 * day),
                tags: ["home", "shop"], project: project),
            Chore(id: "c2", title: "Buy bread", isDone: true, priority: 1, score: -0.5, tags: ["shop"]),
            Chore(
                id: "c3", title: "Call Ana", priority: 3, score: 10, due: Date(timeIntervalSince1970: day),
                project: project),
            Chore(id: "c4", title: "café", priority: 0, score: 0, tags: ["home"]),
            Chore(
                id: "c5", title: "Écrire", isDone: true, priority: 2, score: 2.25,
                due: Date(timeIntervalSince1970: 2 * day)),
            Chore(id: "c6", title: "buy stamps", priority: -1, score: 3),
        ]
        for chore in chores { try await store.save(chore) }
        return store
    }

    private func ids(_ query: ModelQuery<Chore>, in store: SyncStore) async throws -> [String] {
        try await store.fetch(query).map(\.id)
    }

    @Test func everyComparatorFiltersInSQLite() async throws {
        let store = try await Self.store()
        let all = ModelQuery(Chore.self)
        #expect(try await ids(all, in: store) == ["c1", "c2", "c3", "c4", "c5", "c6"])
        #expect(try await ids(all.filter(.equals(.isDone, true)), in: store) == ["c2", "c5"])
        #expect(try await ids(all.filter(.notEquals(.priority, 2)), in: store) == ["c2", "c3", "c4", "c6"])
        #expect(try await ids(all.filter(.lessThan(.score, 0)), in: store) == ["c2"])
        #expect(try await ids(all.filter(.lessThanOrEquals(.priority, 0)), in: store) == ["c4", "c6"])
        #expect(try await ids(all.filter(.greaterThan(.score, 2.25)), in: store) == ["c3", "c6"])
        #expect(try await ids(all.filter(.greaterThanOrEquals(.score, 2.25)), in: store) == ["c3", "c5", "c6"])
        #expect(try await ids(all.filter(.isIn(.priority, [1, 3])), in: store) == ["c2", "c3"])
        #expect(try await ids(all.filter(.notIn(.priority, [1, 3])), in: store) == ["c1", "c4", "c5", "c6"])
        #expect(try await ids(all.filter(.beginsWith(.title, "Buy")), in: store) == ["c1", "c2"])
        #expect(try await ids(all.filter(.beginsWith(.title, "caf")), in: store) == ["c4"])
        #expect(try await ids(all.filter(.contains(.tags, "shop")), in: store) == ["c1", "c2"])
        #expect(try await ids(all.filter(.references(.project, recordName: "p1")), in: store) == ["c1", "c3"])
        #expect(try await ids(all.filter(.isNil(.due)), in: store) == ["c2", "c4", "c6"])
        #expect(try await ids(all.filter(.isNotNil(.project)), in: store) == ["c1", "c3"])
        let before = Date(timeIntervalSince1970: 2.5 * Self.day)
        #expect(try await ids(all.filter(.lessThan(.due, before)), in: store) == ["c3", "c5"])
        #expect(try await ids(all.filter(.equals(.named("title"), "café")), in: store) == ["c4"])
        #expect(try await ids(all.filter(.equals(.recordName, "c3")), in: store) == ["c3"])
    }

    @Test func filtersCombineWithAndOrNot() async throws {
        let store = try await Self.store()
        let all = ModelQuery(Chore.self)
        let open: ModelFilter<Chore> = .equals(.isDone, false)
        #expect(try await ids(all.filter(open && .contains(.tags, "home")), in: store) == ["c1", "c4"])
        #expect(try await ids(all.filter(.equals(.priority, 3) || .lessThan(.score, 0)), in: store) == ["c2", "c3"])
        #expect(try await ids(all.filter(!open), in: store) == ["c2", "c5"])
        // A record without the field matches neither a comparison nor its negation.
        #expect(
            try await ids(all.filter(!.lessThan(.due, Date(timeIntervalSince1970: 0))), in: store) == [
                "c1", "c3", "c5",
            ])
        #expect(try await ids(all.filter(open).filter(.greaterThan(.priority, 0)), in: store) == ["c1", "c3"])
        #expect(try await ids(all.filter(.all([])), in: store).count == 6)
        #expect(try await ids(all.filter(.any([])), in: store).isEmpty)
    }

    @Test func sortsLimitsCountsAndExists() async throws {
        let store = try await Self.store()
        let all = ModelQuery(Chore.self)
        #expect(
            try await ids(all.sorted(by: .descending(.priority)), in: store) == ["c3", "c1", "c5", "c2", "c4", "c6"])
        #expect(
            try await ids(all.sorted(by: .ascending(.priority)), in: store) == ["c6", "c4", "c2", "c1", "c5", "c3"])
        // Records without the field sort first ascending, last descending.
        #expect(try await ids(all.sorted(by: .ascending(.due)), in: store) == ["c2", "c4", "c6", "c3", "c5", "c1"])
        #expect(try await ids(all.sorted(by: .descending(.due)), in: store) == ["c1", "c5", "c3", "c2", "c4", "c6"])
        // Strings by their bytes: upper case before lower, accented letters after both.
        #expect(try await ids(all.sorted(by: .ascending(.title)), in: store) == ["c2", "c1", "c3", "c6", "c4", "c5"])
        let page = all.sorted(by: .ascending(.score)).limit(2, offset: 1)
        #expect(try await ids(page, in: store) == ["c4", "c1"])
        #expect(try await store.count(all) == 6)
        #expect(try await store.count(all.filter(.isNil(.due))) == 3)
        #expect(try await store.count(all.filter(.isNil(.due)).limit(2)) == 2)
        #expect(try await store.count(all.limit(10, offset: 4)) == 2)
        #expect(try await store.exists(all.filter(.beginsWith(.title, "Call"))))
        #expect(try await !store.exists(all.filter(.beginsWith(.title, "call"))))
        #expect(try await store.fetchOne(all.sorted(by: .descending(.score)))?.id == "c3")
        let records = try await store.records(matching: all.filter(.equals(.isDone, true)))
        #expect(records.map(\.id.recordName) == ["c2", "c5"])
        #expect(records.first?["title"] == .string("Buy bread"))
    }

    @Test func creationAndModificationDatesSortRecordsNotSyncedYet() async throws {
        let clock = VirtualCloudClock()
        let store = try SyncStore.inMemory(clock: clock)
        for name in ["b", "a", "c"] {
            try await store.save(Chore(id: name, title: name))
            clock.advance(by: .seconds(1))
        }
        try await store.update(Chore.self, id: "b") { $0.title = "b again" }
        let all = ModelQuery(Chore.self)
        #expect(try await ids(all.sorted(by: .descending(.creationDate)), in: store) == ["c", "a", "b"])
        #expect(try await ids(all.sorted(by: .descending(.modificationDate)), in: store) == ["b", "c", "a"])
    }

    @Test func aQueryOfADeclaredIndexUsesItAndOthersScan() async throws {
        let store = try await Self.store()
        try await store.declareIndexes(for: [Chore.self])
        #expect(try await store.declaredIndexes().count == 2)
        let indexed = ModelQuery(Chore.self).filter(.equals(.isDone, false)).sorted(by: .descending(.priority))
            .limit(2)
        let plan = try await store.queryPlan(indexed)
        #expect(plan.contains { $0.contains("USING INDEX ncs_index_openByPriority_") }, "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "the index gives the order: \(plan)")
        #expect(try await ids(indexed, in: store) == ["c3", "c1"])
        // The other direction narrows on the same index, and sorts each run of equal keys by name.
        let ascending = ModelQuery(Chore.self).filter(.equals(.isDone, false)).sorted(by: .ascending(.priority))
        let ascendingPlan = try await store.queryPlan(ascending)
        #expect(ascendingPlan.contains { $0.contains("USING INDEX ncs_index_") }, "\(ascendingPlan)")
        #expect(try await ids(ascending, in: store) == ["c6", "c4", "c1", "c3"])
        let byCreation = ModelQuery(Chore.self).filter(.equals(.isDone, false)).sorted(by: .descending(.creationDate))
        #expect(try await store.queryPlan(byCreation).contains { $0.contains("USING INDEX ncs_index_") })
        let unindexed = ModelQuery(Chore.self).filter(.beginsWith(.title, "Buy"))
        let scan = try await store.queryPlan(unindexed)
        #expect(!scan.contains { $0.contains("ncs_index_") }, "\(scan)")
        #expect(try await ids(unindexed, in: store) == ["c1", "c2"])
    }

    @Test func equalKeysAreOrderedByAscendingRecordNameInEitherDirection() async throws {
        let store = try SyncStore.inMemory()
        for (id, priority) in [("c", 1), ("a", 1), ("b", 2), ("d", 1)] {
            try await store.save(Chore(id: id, title: id, priority: priority))
        }
        let all = ModelQuery(Chore.self)
        #expect(try await ids(all.sorted(by: .descending(.priority)), in: store) == ["b", "a", "c", "d"])
        #expect(try await ids(all.sorted(by: .ascending(.priority)), in: store) == ["a", "c", "d", "b"])
        // With the declared (descending) index, the same order, without a sort of its own.
        try await store.declareIndexes([
            StoreIndex(Chore.self, on: [], sortedBy: [.descending(.priority)], named: "byPriority")
        ])
        let indexed = all.sorted(by: .descending(.priority))
        #expect(try await ids(indexed, in: store) == ["b", "a", "c", "d"])
        #expect(!(try await store.queryPlan(indexed)).contains { $0.contains("TEMP B-TREE") })
    }

    @Test func aFieldWithoutAValueMatchesNoComparisonWithAnEmptyListNegatedOrNot() async throws {
        let store = try await Self.store()
        let all = ModelQuery(Chore.self)
        let none: [Date] = []
        #expect(try await ids(all.filter(.isIn(.due, none)), in: store).isEmpty)
        #expect(try await ids(all.filter(.notIn(.due, none)), in: store) == ["c1", "c3", "c5"])
        #expect(try await ids(all.filter(!.isIn(.due, none)), in: store) == ["c1", "c3", "c5"])
        #expect(try await ids(all.filter(!.notIn(.due, none)), in: store).isEmpty)
        // As with a list that has values: a chore without a due date is found by isNil only.
        let day = [Date(timeIntervalSince1970: Self.day)]
        #expect(try await ids(all.filter(!.isIn(.due, day)), in: store) == ["c1", "c5"])
        #expect(try await ids(all.filter(!.notIn(.due, day)), in: store) == ["c3"])
        #expect(try await store.count(all.filter(.isNil(.due))) == 3)
    }

    @Test func aQueryPlanRightAfterDeclaringIndexesOnAFileIsTheOneTheNextFetchUses() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SyncStore(path: directory.appendingPathComponent("store.sqlite").path)
        for chore in [Chore(id: "c1", title: "a", priority: 1), Chore(id: "c2", title: "b", priority: 2)] {
            try await store.save(chore)
        }
        let query = ModelQuery(Chore.self).filter(.equals(.isDone, false)).sorted(by: .descending(.priority))
        // A plan read before the index exists makes the readers load the schema of that moment.
        #expect(!(try await store.queryPlan(query)).contains { $0.contains("ncs_index_") })
        try await store.declareIndexes(for: [Chore.self])
        let plan = try await store.queryPlan(query)
        #expect(plan.contains { $0.contains("USING INDEX ncs_index_openByPriority_") }, "\(plan)")
        #expect(try await ids(query, in: store) == ["c2", "c1"])
        try await store.close()
    }

    @Test func anIndexOnAFieldTheModelDoesntHaveIsRefusedHoweverItIsDeclared() async throws {
        let store = try await Self.store()
        let misspelt = StoreIndex(Chore.self, on: [.named("nmae")])
        let expected = SyncError.invalidIndex(
            "Chore has no field \"nmae\" (its fields: due, id, isDone, priority, project, score, tags, title); "
                + "check the spelling, or name the field by its coding key so the compiler checks it")
        await #expect(throws: expected) { try await store.declareIndexes([misspelt]) }
        await #expect(throws: SyncError.self) {
            try await store.declareIndexes([
                StoreIndex(Chore.self, on: [], sortedBy: [.ascending(.named("prioritty"))])
            ])
        }
        await #expect(
            throws: SyncError.invalidIndex(
                "\"open chores\" can't name the index on Chore: use letters, digits and underscores")
        ) {
            try await store.declareIndexes([StoreIndex(Chore.self, on: [.key(.isDone)], named: "open chores")])
        }
        #expect(try await store.declaredIndexes().isEmpty)
        // A made name says what the index covers.
        #expect(
            StoreIndex(Chore.self, on: [.key(.isDone)], sortedBy: [.descending(.due)]).name == "Chore_isDone_due_desc")
    }

    @Test func declaringIndexesAgainCreatesAndDropsAsTheDeclarationsChanged() async throws {
        let store = try await Self.store()
        try await store.declareIndexes(for: [Chore.self])
        let first = try await store.declaredIndexes()
        try await store.declareIndexes([StoreIndex(Chore.self, on: .title)])
        let second = try await store.declaredIndexes()
        #expect(second == [#"Chore("title")"#])
        #expect(Set(first).isDisjoint(with: second))
        let names = try await store.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'ncs_index_%'")
        }
        #expect(names.count == 1)
        try await store.declareIndexes([])
        #expect(try await store.declaredIndexes().isEmpty)
    }

    @Test func aMisspelledFieldNameGivenAsAStringIsAClearError() async throws {
        let store = try await Self.store()
        let query = ModelQuery(Chore.self).filter(.equals(.named("titel"), "x"))
        let error = await #expect(throws: SyncError.self) { try await store.fetch(query) }
        guard error?.code == .invalidQuery, let message = error?.reason else {
            Issue.record("expected invalidQuery, got \(String(describing: error))")
            return
        }
        #expect(message.contains("\"titel\"") && message.contains("title") && message.contains("coding key"))
        await #expect(throws: SyncError.self) {
            try await store.count(ModelQuery(Chore.self).sorted(by: .ascending(.named("prio"))))
        }
        // A bytes or list value can't be compared; nil is asked with isNil.
        await #expect(throws: SyncError.self) {
            try await store.fetch(ModelQuery(Chore.self).filter(.equals(.tags, ["home"])))
        }
        await #expect(throws: SyncError.self) {
            try await store.fetch(ModelQuery(Chore.self).filter(.equals(.due, Date?.none)))
        }
        await #expect(
            throws: SyncError.invalidQuery(
                "the limit and offset of a query of Chore can't be negative (limit -1, offset 0)")
        ) {
            try await store.fetch(ModelQuery(Chore.self).limit(-1))
        }
    }

    @Test func aMalformedIndexDeclarationIsAClearErrorAndChangesNothing() async throws {
        let store = try await Self.store()
        try await store.declareIndexes(for: [Chore.self])
        await #expect(throws: SyncError.invalidIndex("the index on Chore names no field; name at least one")) {
            try await store.declareIndexes([StoreIndex(Chore.self, on: [QueryField<Chore>]())])
        }
        await #expect(throws: SyncError.self) {
            try await store.declareIndexes([StoreIndex(recordType: "Chore", fieldNames: ["bad name"])])
        }
        await #expect(throws: SyncError.self) {
            try await store.declareIndexes([
                StoreIndex(recordType: "Chore'; DROP TABLE ncs_record; --", fieldNames: ["a"])
            ])
        }
        struct Misspelt: CKCodable, QueryableModel, Identifiable {
            var id: String
            enum CodingKeys: String, CodingKey { case id }
            static var storeIndexes: [StoreIndex] { [StoreIndex(Misspelt.self, on: [.named("idd")])] }
        }
        let error = await #expect(throws: SyncError.self) { try await store.declareIndexes(for: [Misspelt.self]) }
        #expect("\(error.map(String.init(describing:)) ?? "")".contains("\"idd\""))
        #expect(try await store.declaredIndexes().count == 2)
    }

    @Test func aGraphOfModelsReadsInOneTransaction() async throws {
        let store = try SyncStore.inMemory()
        for index in 0..<5 {
            try await store.save(
                Shelf(
                    id: "s\(index)", name: "Shelf \(index)",
                    books: (0..<3).map { Book(id: "b\(index)-\($0)", title: "Book \($0)") }))
        }
        let shelves = try await store.fetch(ModelQuery(Shelf.self).filter(.greaterThanOrEquals(.name, "Shelf 3")))
        #expect(shelves.map(\.id) == ["s3", "s4"])
        #expect(shelves[1].books == (0..<3).map { Book(id: "b4-\($0)", title: "Book \($0)") })
        #expect(try await store.fetchAll(Shelf.self).count == 5)
    }
}
