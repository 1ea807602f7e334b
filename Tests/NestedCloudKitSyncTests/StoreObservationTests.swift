import Foundation
import NestedCloudKitCodable
import Observation
import TestSupport
import Testing

@testable import NestedCloudKitSync

@Suite("Store: observation")
struct StoreObservationTests {
    private static let titles = ModelQuery(Memo.self).sorted(by: .ascending(.text))

    @Test func aQueryDeliversItsResultAtOnceThenAfterEachChange() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Memo(id: "a", text: "apple"))
        var results = store.observe(Self.titles).makeAsyncIterator()
        #expect(try await results.next()?.map(\.text) == ["apple"])
        try await store.save(Memo(id: "b", text: "banana"))
        #expect(try await results.next()?.map(\.text) == ["apple", "banana"])
        try await store.delete(Memo.self, id: "a")
        #expect(try await results.next()?.map(\.text) == ["banana"])
        try await store.update(Memo.self, id: "b") { $0.text = "blueberry" }
        #expect(try await results.next()?.map(\.text) == ["blueberry"])
        try await store.resetLocalStore()
        #expect(try await results.next()?.map(\.text) == [])
    }

    @Test(arguments: [false, true])
    func aSaveOfAnotherTypeWakesNoObservationAndASaveOfItsTypeWakesItAfterTheCommit(inFile: Bool) async throws {
        let store = try inFile ? SyncStore(path: temporaryDatabasePath("observed")) : SyncStore.inMemory()
        var memos = store.observe(Self.titles).makeAsyncIterator()
        var count = store.observeCount(ModelQuery(Memo.self)).makeAsyncIterator()
        #expect(try await memos.next()?.isEmpty == true)
        #expect(try await count.next() == 0)
        let hub = store.connection.recordChanges
        let before = hub.wakeUps
        for index in 0..<20 { try await store.save(Chore(id: "c\(index)", title: "chore")) }
        try await store.delete(Chore.self, id: "c0")
        #expect(hub.wakeUps == before)
        try await store.save(Memo(id: "a", text: "apple"))
        #expect(hub.wakeUps == before + 2)
        #expect(try await memos.next()?.map(\.text) == ["apple"])
        #expect(try await count.next() == 1)
        try await store.delete(Memo.self, id: "a")
        #expect(try await memos.next()?.isEmpty == true)
        #expect(try await count.next() == 0)
    }

    @Test func aGraphIsWokenByAChangeToARecordItReferencesOfAnotherType() async throws {
        let store = try SyncStore.inMemory()
        let school = School(
            id: "s", name: "Hill", director: Person(id: "d", name: "Ada"), students: [Person(id: "p", name: "Bo")])
        try await store.save(school)
        var observed = store.observe(School.self, id: "s").makeAsyncIterator()
        #expect(try await observed.next() == school)
        try await store.update(Person.self, id: "d") { $0.name = "Grace" }
        var expected = school
        expected.director.name = "Grace"
        #expect(try await observed.next() == expected)
    }

    @Test func aModelNotThereYetIsWokenByItsArrivalAsAnyType() async throws {
        let store = try SyncStore.inMemory()
        var observed = store.observe(Memo.self, id: "later").makeAsyncIterator()
        #expect(try #require(try await observed.next()) == nil)
        try await store.save(Memo(id: "later", text: "here"))
        #expect(try await observed.next()??.text == "here")
        // Found, it follows memos alone.
        let before = store.connection.recordChanges.wakeUps
        try await store.save(Chore(id: "c", title: "chore"))
        #expect(store.connection.recordChanges.wakeUps == before)
    }

    @Test func aSaveThatChangesNothingDeliversNothing() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Memo(id: "a", text: "apple"))
        // Memo isn't Equatable: nothing can drop an equal result, so only a transaction that wrote could deliver.
        var results = store.observe(Self.titles).makeAsyncIterator()
        #expect(try await results.next()?.map(\.text) == ["apple"])
        try await store.save(Memo(id: "a", text: "apple"))
        try await store.save(Memo(id: "b", text: "banana"))
        #expect(try await results.next()?.map(\.text) == ["apple", "banana"])
    }

    @Test func aSyncDeliversTheOtherDevicesChangesOnceFetched() async throws {
        let scenario = Scenario()
        let a = try await scenario.device()
        let b = try await scenario.device()
        var results = b.store.observe(Self.titles).makeAsyncIterator()
        #expect(try await results.next()?.isEmpty == true)
        try await a.store.save(Memo(id: "m", text: "from a"))
        try await a.sync()
        try await b.sync()
        // Whatever the sync's transactions were, the last result holds the fetched memo, and no older one follows.
        var latest = try await results.next()
        while latest?.map(\.text) != ["from a"] { latest = try await results.next() }
        try await b.store.save(Memo(id: "n", text: "from b"))
        #expect(try await results.next()?.map(\.text) == ["from a", "from b"])
    }

    @Test func resultsComeInTheOrderOfTheTransactionsNewestLast() async throws {
        let store = try SyncStore.inMemory()
        let observation = store.observe(ModelQuery(Memo.self))
        var results = observation.makeAsyncIterator()
        #expect(try await results.next()?.isEmpty == true)
        for index in 1...50 { try await store.save(Memo(id: "m\(index)", text: "\(index)")) }
        // A slow reader gets the newest result, not each one in between; counts never go back.
        var last = 0
        while last < 50 {
            guard let count = try await results.next()?.count else { break }
            #expect(count > last)
            last = count
        }
        #expect(last == 50)
    }

    @Test func cancellingTheObservingTaskStopsIt() async throws {
        let store = try SyncStore.inMemory()
        let delivered = Locked(0)
        let observing = Task {
            for try await _ in store.observe(Self.titles) { delivered.withLock { $0 += 1 } }
            return "finished"
        }
        try await store.save(Memo(id: "a", text: "apple"))
        observing.cancel()
        #expect(try await observing.value == "finished")
    }

    @Test func oneModelByID() async throws {
        let store = try SyncStore.inMemory()
        var results = store.observe(Chore.self, id: "c").makeAsyncIterator()
        #expect(try await results.next() == .some(nil))
        try await store.save(Chore(id: "c", title: "first"))
        #expect(try await results.next()??.title == "first")
        // Another model's change leaves this one equal: nothing is delivered for it.
        try await store.save(Chore(id: "other", title: "x"))
        try await store.save(Chore(id: "c", title: "second"))
        #expect(try await results.next()??.title == "second")
        try await store.delete(Chore.self, id: "c")
        #expect(try await results.next() == .some(nil))
    }

    @MainActor
    @Test func anObservedQueryFollowsTheStoreOnTheMainActor() async throws {
        let store = try SyncStore.inMemory()
        try await store.save(Chore(id: "a", title: "open", priority: 1))
        let observed = ObservedQuery(
            ModelQuery(Chore.self).filter(.equals(.isDone, false)).sorted(by: .descending(.priority)), in: store)
        try await waitUntil { observed.isLoaded }
        #expect(observed.models.map(\.id) == ["a"])
        // Observation tells a view that reads `models` when they change.
        let changed = Locked(false)
        withObservationTracking {
            _ = observed.models
        } onChange: {
            changed.withLock { $0 = true }
        }
        try await store.save(Chore(id: "b", title: "urgent", priority: 5))
        try await waitUntil { observed.models.count == 2 }
        #expect(changed.withLock { $0 })
        #expect(observed.models.map(\.id) == ["b", "a"])
        observed.query = ModelQuery(Chore.self).filter(.greaterThan(.priority, 3))
        try await waitUntil { observed.models.map(\.id) == ["b"] }
        #expect(observed.error == nil)
        observed.query = ModelQuery(Chore.self).filter(.equals(.named("nope"), 1))
        try await waitUntil { observed.error != nil }
    }

    /// Yields until the condition holds: the observation delivers on the main actor after the store's own work.
    @MainActor
    private func waitUntil(_ condition: @MainActor () -> Bool) async throws {
        for _ in 0..<100_000 where !condition() { await Task.yield() }
        #expect(condition())
    }
}
