import Foundation
import NestedCloudKitCodable
import TestSupport
import Testing

/// The object graph: shared children, diamonds, cycles, clashes, order.
@Suite("Object graph")
struct GraphTests {
    struct Leaf: CKEncodable, Identifiable {
        var id: String
        var value = 0
    }

    struct Branch: CKEncodable, Identifiable {
        var id: String
        var leaf: Leaf
    }

    struct Tree: CKEncodable, Identifiable {
        var id: String
        var left: Branch
        var right: Branch
        var favorite: Leaf
    }

    @Test func sharedChildAndDiamondAreEncodedOnce() throws {
        let shared = Leaf(id: "leaf", value: 7)
        let tree = Tree(
            id: "tree", left: Branch(id: "l", leaf: shared), right: Branch(id: "r", leaf: shared), favorite: shared)
        try expectRecords(
            of: tree,
            equal: [
                record("Leaf", "leaf", ["id": .string("leaf"), "value": .int64(7)]),
                record("Branch", "l", ["id": .string("l"), "leaf": reference("leaf")]),
                record("Branch", "r", ["id": .string("r"), "leaf": reference("leaf")]),
                record(
                    "Tree", "tree",
                    [
                        "id": .string("tree"), "left": reference("l"), "right": reference("r"),
                        "favorite": reference("leaf"),
                    ]),
            ])
    }

    @Test func twoDifferentValuesWithOneRecordIDAreAnError() throws {
        let tree = Tree(
            id: "tree", left: Branch(id: "l", leaf: Leaf(id: "leaf", value: 1)),
            right: Branch(id: "r", leaf: Leaf(id: "leaf", value: 2)), favorite: Leaf(id: "other")
        )
        let error = try encodingError(of: tree)
        #expect(error.code == .conflictingRecordID)
        #expect(error.path == ["right", "leaf"])
        #expect(error.recordID == CloudRecord.ID(recordName: "leaf"))
    }

    @Test func valueWithTheIDOfARecordStillBeingEncodedIsAnError() throws {
        let error = try encodingError(of: Branch(id: "same", leaf: Leaf(id: "same")))
        #expect(error.code == .conflictingRecordID)
        #expect(error.path == ["leaf"])
    }

    final class Node: CKEncodable {
        let name: String
        var next: Node?
        var friends: [Node] = []
        init(_ name: String) { self.name = name }
        var cloudKitIdentifier: String { name }
        enum CodingKeys: CodingKey { case next, friends }
    }

    @Test func classCycleEndsInAReferenceCycle() throws {
        let a = Node("a"), b = Node("b"), c = Node("c")
        a.next = b
        b.next = c
        c.next = a
        // The reference that closes the cycle (c to a) points forward: a is still being encoded when c reaches it.
        try expectRecords(
            of: a,
            equal: [
                record("Node", "c", ["next": reference("a")]),
                record("Node", "b", ["next": reference("c")]),
                record("Node", "a", ["next": reference("b")]),
            ])
    }

    @Test func instanceThatReferencesItselfEncodesOnce() throws {
        let a = Node("a")
        a.next = a
        a.friends = [a, a]
        try expectRecords(
            of: a,
            equal: [
                record(
                    "Node", "a",
                    [
                        "next": reference("a"),
                        "friends": .referenceList([
                            CloudReference(recordID: CloudRecord.ID(recordName: "a")),
                            CloudReference(recordID: CloudRecord.ID(recordName: "a")),
                        ]),
                    ])
            ])
    }

    @Test func recordsComeAfterTheRecordsTheyReferenceAndTheRootLast() throws {
        let records = try records(of: School.example)
        var seen: Set<CloudRecord.ID> = []
        for record in records {
            #expect(record.referencedRecordIDs.allSatisfy(seen.contains), "\(record.id) before its targets")
            seen.insert(record.id)
        }
        #expect(records.last?.id.recordName == "school-1")
    }

    @Test func graphGivesTheRootAndEachRecordByID() throws {
        let graph = try CKRecordEncoder().encodeGraph(School.example)
        #expect(graph.root.id == CloudRecord.ID(recordName: "school-1"))
        #expect(graph.records.count == 6)
        #expect(graph[CloudRecord.ID(recordName: "lisa")]?["name"] == .string("Lisa"))
        #expect(graph[CloudRecord.ID(recordName: "nobody")] == nil)
        #expect(graph.records == (try CKRecordEncoder().encode(School.example)))
    }

    struct Link: CKEncodable, Identifiable {
        var id: Int
        var next: [Link]
    }

    static func chain(length: Int) -> Link {
        var link = Link(id: length - 1, next: [])
        for id in stride(from: length - 2, through: 0, by: -1) { link = Link(id: id, next: [link]) }
        return link
    }

    @Test func deepGraphEncodesWithoutExhaustingTheStack() async throws {
        // Nested records are encoded one after another, so depth costs no stack: this chain is three times
        // deeper than what recursion overflowed at in a debug build on an 8 MB thread.
        let records = try await Task.detached { try CKRecordEncoder().encode(Self.chain(length: 3000)) }.value
        #expect(records.count == 3000)
        #expect(records.first?.id.recordName == "2999")
        #expect(records.last?.id.recordName == "0")
    }
}
