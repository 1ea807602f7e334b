import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import TestSupport
import Testing

/// Graphs come back whole, in as many round trips as they are deep, each record fetched once.
@Suite("Graph decoding")
struct GraphDecodingTests {
    struct Link: CKCodable, Identifiable, Equatable {
        var id: Int
        var next: [Link]
    }

    static func chain(length: Int) -> Link {
        var link = Link(id: length - 1, next: [])
        for id in stride(from: length - 2, through: 0, by: -1) { link = Link(id: id, next: [link]) }
        return link
    }

    @Test(arguments: [1, 2, 3, 20])
    func chainOfDepthDIsFetchedInDRequests(depth: Int) async throws {
        let chain = Self.chain(length: depth + 1)
        let (decoded, database) = try await roundTrip(chain)
        #expect(decoded == chain)
        let statistics = database.network.statistics
        #expect(statistics.fetchRequests == depth)
        #expect(statistics.recordsFetched == depth)
    }

    struct Leaf: CKCodable, Identifiable, Equatable {
        var id: String
        var value: Int
    }

    struct Branch: CKCodable, Identifiable, Equatable {
        var id: String
        var leaf: Leaf
    }

    struct Tree: CKCodable, Identifiable, Equatable {
        var id: String
        var left: Branch
        var right: Branch
        var favorite: Leaf
    }

    @Test func diamondAndSharedChildAreFetchedOnce() async throws {
        let shared = Leaf(id: "leaf", value: 7)
        let tree = Tree(
            id: "tree", left: Branch(id: "l", leaf: shared), right: Branch(id: "r", leaf: shared), favorite: shared)
        let (decoded, database) = try await roundTrip(tree)
        #expect(decoded == tree)
        let statistics = database.network.statistics
        // The shared leaf is reached at depth 1 (favorite) and 2 (through both branches): fetched once, at depth 1.
        #expect(statistics.fetchRequests == 1)
        #expect(statistics.recordsFetched == 3)
    }

    /// How many times each record name was decoded as a ``CountedLeaf``: names are unique to one test.
    static let decodedNames = Locked<[String: Int]>([:])

    struct CountedLeaf: CKCodable, Identifiable, Equatable {
        var id: String

        init(id: String) { self.id = id }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            let name = id
            GraphDecodingTests.decodedNames.withLock { $0[name, default: 0] += 1 }
        }
    }

    struct Holder: CKCodable, Identifiable, Equatable {
        var id: String
        var first: CountedLeaf
        var second: CountedLeaf
        var alone: CountedLeaf
    }

    @Test func aRecordReachedOnceOrTwiceIsDecodedOnce() async throws {
        let shared = CountedLeaf(id: "counted-shared")
        let holder = Holder(id: "holder", first: shared, second: shared, alone: CountedLeaf(id: "counted-alone"))
        let (decoded, _) = try await roundTrip(holder)
        #expect(decoded == holder)
        let counts = Self.decodedNames.withLock { $0 }
        #expect(counts["counted-shared"] == 1)
        #expect(counts["counted-alone"] == 1)
    }

    struct ThreeHolder: CKCodable, Identifiable, Equatable {
        var id: String
        var first: CountedLeaf
        var second: CountedLeaf
        var third: CountedLeaf
        var alone: CountedLeaf
    }

    /// Decoded from records in hand, nothing counts references first: a struct's record is decoded once, and a
    /// second time only when a second parent reaches it, whose value the third parent then shares.
    @Test func aRecordInHandIsDecodedOnceUnlessSharedAndThenTwice() throws {
        let shared = CountedLeaf(id: "in-hand-shared")
        let holder = ThreeHolder(
            id: "three", first: shared, second: shared, third: shared, alone: CountedLeaf(id: "in-hand-alone"))
        let graph = try CKRecordEncoder().encodeGraph(holder)
        #expect(try CKRecordDecoder().decode(ThreeHolder.self, from: graph) == holder)
        let counts = Self.decodedNames.withLock { $0 }
        #expect(counts["in-hand-shared"] == 2)
        #expect(counts["in-hand-alone"] == 1)
    }

    struct CountedNode: CKCodable, Identifiable, Equatable {
        var id: String
        var children: [CountedNode]

        init(id: String, children: [CountedNode]) {
            self.id = id
            self.children = children
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            children = try container.decode([CountedNode].self, forKey: .children)
            let name = id
            GraphDecodingTests.decodedNames.withLock { $0[name, default: 0] += 1 }
        }
    }

    /// How a store reads many models: a root that another root references is decoded once, in either order.
    @Test(arguments: [false, true])
    func aRootThatAnotherRootReferencesIsDecodedOnce(childFirst: Bool) throws {
        let childName = "counted-root-child-\(childFirst)"
        let child = CountedNode(id: childName, children: [])
        let parent = CountedNode(id: "counted-root-parent-\(childFirst)", children: [child])
        let records = try CKRecordEncoder().encodeRecords(parent)
        let byID = Dictionary(uniqueKeysWithValues: records.map { ($0.id, $0) })
        let roots = childFirst ? records : records.reversed()
        let values = try CKRecordDecoder().decodeAll(CountedNode.self, from: roots) { ids, receive in
            for case let record? in ids.map({ byID[$0] }) { _ = receive(record) }
        }
        #expect(values == (childFirst ? [child, parent] : [parent, child]))
        #expect(Self.decodedNames.withLock { $0[childName] } == 1)
    }

    /// A store may hand a level more records than it asked for (every record the last level references): the
    /// decoder takes those it asked for once, says which, and drops the rest.
    @Test func aFetchThatHandsMoreThanItWasAskedForIsTakenForWhatWasAsked() throws {
        let grandchild = CountedNode(id: "extra-grandchild", children: [])
        let child = CountedNode(id: "extra-child", children: [grandchild])
        let root = CountedNode(id: "extra-root", children: [child])
        let records = try CKRecordEncoder().encodeRecords(root)
        let byName = Dictionary(uniqueKeysWithValues: records.map { ($0.id.recordName, $0) })
        let stranger = CloudRecord(recordType: "CountedNode", id: CloudRecord.ID(recordName: "stranger"))
        var answers: [[String: Bool]] = []
        let values = try CKRecordDecoder().decodeAll(
            CountedNode.self, from: [try #require(byName["extra-root"])]
        ) { ids, receive in
            var taken: [String: Bool] = [:]
            // Everything, twice, and a record nothing references.
            for record in records + records + [stranger] {
                let name = record.id.recordName
                let wasTaken = receive(record)
                taken[name] = (taken[name] ?? false) || wasTaken
            }
            answers.append(taken)
        }
        #expect(values == [root])
        #expect(
            answers == [
                ["extra-root": false, "extra-child": true, "extra-grandchild": false, "stranger": false],
                ["extra-root": false, "extra-child": false, "extra-grandchild": true, "stranger": false],
            ])
    }

    struct Class: CKCodable, Identifiable, Equatable {
        var id: String
        var students: [Leaf]
    }

    @Test(arguments: [0, 1000])
    func referenceListOfAnySizeRoundTrips(count: Int) async throws {
        let value = Class(id: "class", students: (0..<count).map { Leaf(id: "s\($0)", value: $0) })
        let (decoded, database) = try await roundTrip(value)
        #expect(decoded == value)
        let statistics = database.network.statistics
        // 1,000 records at one level are split at the limit of 400: three requests, in flight together.
        #expect(statistics.fetchRequests == (count == 0 ? 0 : 3))
        #expect(statistics.recordsFetched == count)
    }

    @Test func wideTreeIsFetchedInOneRequestPerLevelAndChunk() async throws {
        struct Root: CKCodable, Identifiable, Equatable { var id: String; var middles: [Middle] }
        struct Middle: CKCodable, Identifiable, Equatable { var id: String; var leaves: [Leaf] }
        let root = Root(
            id: "root",
            middles: (0..<10).map { middle in
                Middle(id: "m\(middle)", leaves: (0..<50).map { Leaf(id: "l\(middle)-\($0)", value: $0) })
            })
        let (decoded, database) = try await roundTrip(root)
        #expect(decoded == root)
        let statistics = database.network.statistics
        #expect(statistics.fetchRequests == 1 + 2)  // 10 middles; then 500 leaves in two chunks of at most 400
        #expect(statistics.recordsFetched == 510)
    }

    final class Node: CKCodable {
        let name: String
        var next: Node?
        init(_ name: String, next: Node? = nil) {
            self.name = name
            self.next = next
        }
        var cloudKitIdentifier: String { name }
    }

    @Test func referenceCycleIsFetchedOnceAndIsAClearError() async throws {
        let a = Node("a"), b = Node("b")
        a.next = b
        b.next = a
        let records = try CKRecordEncoder().encode(a)
        let database = InMemoryCloudDatabase()
        try await database.saveRecords(records)
        let root = try await database.record(for: CloudRecord.ID(recordName: "a"))
        database.network.resetStatistics()
        let error = try await #require(throws: CKCodableError.self) {
            try await CKRecordDecoder().decode(Node.self, from: root, referenceDatabase: database)
        }
        // A graph this shallow is decoded each record inside its parent: a reaches b, and b reaches a again.
        #expect(error.code == .referenceCycle)
        #expect(error.referencedRecordID == CloudRecord.ID(recordName: "a"))
        #expect(error.path == ["next", "next"])
        #expect(error.recordID == CloudRecord.ID(recordName: "a"))
        let statistics = database.network.statistics
        #expect(statistics.fetchRequests == 1)
        #expect(statistics.recordsFetched == 1)
    }

    struct Person: CKCodable, Identifiable, Equatable {
        var id: String
        var name: String
        var friend: CloudLazyReference<Person>?
    }

    @Test func cycleThroughALazyReferenceRoundTripsAndLoadsOnDemand() async throws {
        let ann = Person(
            id: "ann", name: "Ann", friend: CloudLazyReference(recordID: CloudRecord.ID(recordName: "bob")))
        let bob = Person(id: "bob", name: "Bob", friend: CloudLazyReference(to: ann))
        let database = InMemoryCloudDatabase()
        try await database.saveRecords(try CKRecordEncoder().encode(ann) + CKRecordEncoder().encode(bob))
        database.network.resetStatistics()
        let decoded = try await CKRecordDecoder().decode(
            Person.self, from: database.record(for: CloudRecord.ID(recordName: "ann")), referenceDatabase: database)
        #expect(decoded == ann)
        #expect(database.network.statistics.requests == 1)  // the root only: the lazy reference isn't followed
        let friend = try await #require(decoded.friend).load(from: database)
        #expect(friend == bob)
    }

    struct Album: CKCodable, Identifiable, Equatable {
        var id: String
        var cover: Leaf
        var photos: [CloudLazyReference<Leaf>]
    }

    @Test func lazyReferencesKeepTheirSubgraphFromBeingFetched() async throws {
        let photos = (0..<5).map { Leaf(id: "p\($0)", value: $0) }
        let album = Album(id: "album", cover: photos[0], photos: photos.map { CloudLazyReference(to: $0) })
        let database = InMemoryCloudDatabase()
        // A lazy reference doesn't encode its target: save the photos that aren't the cover on their own.
        for photo in photos.dropFirst() { try await database.saveRecords(try CKRecordEncoder().encode(photo)) }
        let saved = try await database.saveRecords(try CKRecordEncoder().encode(album))
        database.network.resetStatistics()
        let decoded = try await CKRecordDecoder().decode(
            Album.self, from: #require(saved.last), referenceDatabase: database)
        #expect(decoded == album)
        let statistics = database.network.statistics
        #expect(statistics.recordsFetched == 1)  // the cover only
        #expect(try await decoded.photos[3].load(from: database) == photos[3])
    }

    @Test func lazyReferenceEncodesAsAReferenceWithThePropertysAction() throws {
        struct Holder: CKCodable, Identifiable {
            var id: String
            var target: CloudLazyReference<Leaf>
            func cloudKitReferenceActions() -> [String: CloudReference.Action] { ["target": .deleteSelf] }
        }
        let zone = CloudRecord.ZoneID(zoneName: "Z")
        let root = try #require(
            try CKRecordEncoder(zoneID: zone).encode(
                Holder(id: "h", target: CloudLazyReference(to: Leaf(id: "t", value: 1)))
            ).last)
        #expect(
            root["target"]
                == .reference(
                    CloudReference(recordID: CloudRecord.ID(recordName: "t", zoneID: zone), action: .deleteSelf)))
    }

    @Test func deepChainFromRecordsInHandDecodesDeepestFirstWithoutExhaustingTheStack() async throws {
        let chain = Self.chain(length: 2000)
        let graph = try CKRecordEncoder().encodeGraph(chain)
        var decoder = CKRecordDecoder()
        decoder.maximumDepth = 5000
        let decoded = try await Task.detached { try decoder.decode(Link.self, from: graph) }.value
        #expect(decoded.id == 0)
        var depth = 0
        var link = decoded
        while let next = link.next.first { link = next; depth += 1 }
        #expect(depth == 1999)
    }

    @Test func deepChainThroughADatabaseDecodes() async throws {
        var decoder = CKRecordDecoder()
        decoder.maximumDepth = 500
        let chain = Self.chain(length: 300)
        let (decoded, database) = try await roundTrip(chain, decoder: decoder)
        #expect(decoded == chain)
        #expect(database.network.statistics.fetchRequests == 299)
    }
}
