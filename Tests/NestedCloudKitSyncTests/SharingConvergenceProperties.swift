import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import PropertyBased
import Testing

@testable import NestedCloudKitSync

/// Alice shares a list with bob; both add, rename and delete items at random, offline, syncing at random times,
/// under every built-in policy. Once both sync, each holds exactly the items alice's database has, in her zone as
/// each names it. A failure reports the seed that replays it.
@Suite("Sync: sharing convergence properties")
struct SharingConvergenceProperties {
    @Test func theOwnerAndAParticipantConverge() async {
        await propertyCheck(count: 10, input: Gen.uint64()) { seed in
            for policy in [ConflictPolicy.fieldByField, .serverWins, .clientWins, .newestEditWins] {
                try await SharingSimulation(seed: seed, policy: policy).run()
            }
        }
    }

    /// The same, with alice removing bob at a random moment: his copy, and whatever he queued for it, goes, and
    /// alice's records stay the server's.
    @Test func aRemovedParticipantEndsWithNothingAndTheOwnerWithTheServersRecords() async {
        await propertyCheck(count: 10, input: Gen.uint64()) { seed in
            try await SharingSimulation(seed: seed, policy: .fieldByField, removesBob: true).run()
        }
    }
}

/// One random run of two users on one simulated server.
private struct SharingSimulation {
    typealias Item = SharingSyncTests.Item
    typealias ShoppingList = SharingSyncTests.ShoppingList

    let seed: UInt64
    let policy: ConflictPolicy
    var removesBob = false

    func run() async throws {
        var random = SplitMix64(seed: seed)
        let clock = VirtualCloudClock()
        let server = InMemoryCloudDatabase(userRecordName: "_alice", clock: clock)
        let configuration = SyncConfiguration(conflictPolicy: policy, retry: SyncRetryPolicy(jitter: 0))
        let alice = try await Device(
            server: server.privateDatabase(of: "_alice"), sharedDatabase: server.sharedDatabase(of: "_alice"),
            clock: clock, configuration: configuration)
        let bob = try await Device(
            server: server.privateDatabase(of: "_bob"), sharedDatabase: server.sharedDatabase(of: "_bob"),
            clock: clock, configuration: configuration)
        let zone = alice.store.zoneID
        let bobsView = CloudRecord.ZoneID(zoneName: zone.zoneName, ownerName: "_alice")
        func item(_ id: String, _ name: String, in zone: CloudRecord.ZoneID) -> Item {
            Item(
                id: id, name: name,
                list: CloudLazyReference(recordID: CloudRecord.ID(recordName: "groceries", zoneID: zone)))
        }

        try await alice.store.save(ShoppingList(id: "groceries", name: "Groceries"))
        try await alice.store.save(item("i0", "milk", in: zone))
        try await alice.sync()
        let share = try await alice.engine.share(CloudRecord.ID(recordName: "groceries", zoneID: zone)) {
            try $0.addParticipant(.init(userRecordName: "_bob", permission: .readWrite))
        }
        _ = try await server.sharedDatabase(of: "_bob").acceptShare(shortGUID: try #require(share.shortGUID))
        try await bob.sync()

        var nextItem = 1
        let removal = removesBob ? Int(random.next() % 14) : -1
        for step in 0..<14 {
            if step == removal {
                try await alice.engine.updateShare(share.id) { share in
                    if let bob = share.participants.first(where: { $0.userRecordName == "_bob" }) {
                        share.removeParticipant(bob)
                    }
                }
            }
            clock.advance(by: .seconds(Int64(1 + random.next() % 30)))
            let (device, view) = random.next() % 2 == 0 ? (alice, zone) : (bob, bobsView)
            let items = try await device.store.fetchAll(Item.self, in: view)
            switch random.next() % 5 {
            case 0:
                try await device.store.save(item("i\(nextItem)", "new \(step)", in: view), in: view)
                nextItem += 1
            case 1 where !items.isEmpty:
                var changed = items[Int(random.next() % UInt64(items.count))]
                changed.name = "renamed \(step)"
                try await device.store.save(changed, in: view)
            case 2 where !items.isEmpty:
                let gone = items[Int(random.next() % UInt64(items.count))]
                try await device.store.deleteRecords(withIDs: [CloudRecord.ID(recordName: gone.id, zoneID: view)])
            default:
                try await device.sync()
            }
        }
        for device in [alice, bob, alice, bob] { try await device.sync() }

        let onServer = try await server.privateDatabase(of: "_alice").records(
            matching: CloudQuery(recordType: "Item"), inZoneWith: zone, desiredKeys: nil, resultsLimit: 400
        ).matchResults.compactMap { try? $0.1.get() }
        func names(_ records: [CloudRecord]) -> [String] {
            records.map { record in
                let name = if case .string(let name)? = record.fields["name"] { name } else { "?" }
                return "\(record.id.recordName)=\(name)"
            }.sorted()
        }
        let expected = names(onServer)
        let alices = names(try await alice.store.records(ofType: "Item", in: zone))
        let bobs = names(try await bob.store.records(ofType: "Item", in: bobsView))
        #expect(alices == expected, "seed \(seed), \(policy): alice holds \(alices), the server \(expected)")
        let bobExpected = removesBob ? [] : expected
        #expect(bobs == bobExpected, "seed \(seed), \(policy): bob holds \(bobs), expected \(bobExpected)")
        #expect(try await alice.engine.status().pendingChanges == 0, "seed \(seed), \(policy)")
        #expect(try await bob.engine.status().pendingChanges == 0, "seed \(seed), \(policy)")
    }
}
