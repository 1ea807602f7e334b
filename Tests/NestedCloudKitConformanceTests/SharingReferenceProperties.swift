import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import PropertyBased
import Testing

/// Each server with several users (the simulated one and the SQLite one) against a reference written here, small
/// enough to check by reading: CloudKit's hierarchical sharing as a few lines of rules over names.
///
/// Random runs of requests: alice adds items under random parents (the list, another item, one that doesn't exist
/// yet), edits, moves and deletes them; shares the list, adds and removes participants, deletes the share; bob
/// writes where he may and where he may not. After every request, whether it succeeded and exactly what bob and
/// carol see must be what the reference says. A failure reports the seed that replays it.
@Suite("Sharing conformance: each server's shared databases against a reference model")
struct SharingReferenceProperties {
    @Test(arguments: SharingServerBackend.all)
    func bobAndCarolSeeWhatTheReferenceSays(backend: SharingServerBackend) async {
        await propertyCheck(count: 12, input: Gen.uint64()) { seed in
            try await ReferenceRun(seed: seed, server: try backend.make(SystemCloudClock()), name: backend.name).run()
        }
    }
}

/// CloudKit's rules for one owner's zone shared from one root, as the tests read them from Apple's documentation:
/// a participant who accepted the share sees the root and every record whose chain of parents reaches it, whatever
/// their permission; only read-write lets them add a record, under a parent they see.
private struct SharingReference {
    struct Item: Equatable {
        var type: String
        var name: String?
        var parent: String?
    }

    struct Participant {
        var permission: CloudShare.Permission
        var accepted: Bool
    }

    var items: [String: Item] = ["list": Item(type: "List")]
    /// The share of the list, when one exists: its participants by user record name.
    var share: [String: Participant]?

    /// Whether `name` is the list or a record whose parents lead to it (a cycle leads nowhere).
    func isUnderList(_ name: String) -> Bool {
        var seen: Set<String> = []
        var current: String? = name
        while let here = current, seen.insert(here).inserted {
            if here == "list" { return items[here] != nil }
            current = items[here]?.parent
        }
        return false
    }

    /// What `user`'s shared database shows, by the view's keys.
    func view(of user: String) -> [String: String] {
        guard share?[user]?.accepted == true else { return [:] }
        var view: [String: String] = [:]
        for (name, item) in items where isUnderList(name) {
            view[ReferenceRun.key(name)] = ReferenceRun.describe(item.type, item.name, item.parent)
        }
        return view
    }

    /// Whether bob may add a record under `parent`.
    func bobMayAdd(under parent: String) -> Bool {
        guard let bob = share?["_bob"], bob.accepted, bob.permission == .readWrite else { return false }
        return items[parent] != nil && isUnderList(parent)
    }
}

private struct ReferenceRun {
    static let zone = CloudRecord.ZoneID(zoneName: "Lists")
    static let sharedZone = CloudRecord.ZoneID(zoneName: "Lists", ownerName: "_alice")
    let seed: UInt64
    let server: SharingServerUsers
    let name: String

    static func key(_ name: String) -> String { "\(sharedZone.zoneName)/\(sharedZone.ownerName)/\(name)" }

    static func describe(_ type: String, _ name: String?, _ parent: String?) -> String {
        "\(type) \(name ?? "-") under \(parent ?? "-")"
    }

    /// One request's choices, all drawn before it is made.
    struct Choices {
        var action: Int
        var step: Int
        /// An existing record: the one to edit, move or delete, or bob's parent.
        var item: String
        /// A new or moved record's parent: an existing record, one that doesn't exist yet (`later-N`), or none.
        var parent: String
        /// The new record's name: `later-N` when that name is free, so a parent that didn't exist appears later.
        var newName: String
        var viewer: String
        var permission: CloudShare.Permission
    }

    func run() async throws {
        var random = Xoshiro(seed: (seed, seed &* 0x9E37_79B9_7F4A_7C15 | 1, ~seed, seed ^ 0xDEAD_BEEF))
        let alice = try server.privateDatabase("_alice")
        let list = CloudRecord(recordType: "List", id: CloudRecord.ID(recordName: "list", zoneID: Self.zone))
        var share = try CloudShare(rootRecord: list)
        _ = try await alice.modifyRecordZones(saving: [Self.zone], deleting: [])
        _ = try await alice.save(list)
        var reference = SharingReference()
        for step in 0..<40 {
            let names = reference.items.keys.sorted()
            let later = "later-\(Int.random(in: 0..<3, using: &random))"
            let choices = Choices(
                action: Int.random(in: 0..<10, using: &random), step: step,
                item: names.randomElement(using: &random) ?? "list",
                parent: (names + [later, "none"]).randomElement(using: &random) ?? "none",
                newName: Bool.random(using: &random) && reference.items[later] == nil ? later : "item-\(step)",
                viewer: Bool.random(using: &random) ? "_bob" : "_carol",
                permission: Bool.random(using: &random) ? .readWrite : .readOnly)
            guard
                let (expected, succeeded) = try await perform(
                    choices, on: alice, list: list, share: &share, reference: &reference)
            else { continue }
            let context = "\(name) server, seed \(seed), step \(step) (action \(choices.action))"
            #expect(succeeded == expected, "\(context): succeeded \(succeeded), the reference says \(expected)")
            for user in ["_bob", "_carol"] {
                let seen = try await Self.view(of: user, on: server)
                #expect(seen == reference.view(of: user), "\(context): \(user) sees what the reference doesn't")
            }
        }
    }

    /// Makes one request and applies what succeeded to the reference; returns whether the reference expected it to
    /// succeed and whether it did, or `nil` for a request not made (deleting the list).
    private func perform(
        _ choices: Choices, on alice: any ShareAcceptingDatabase, list: CloudRecord, share: inout CloudShare,
        reference: inout SharingReference
    ) async throws -> (expected: Bool, succeeded: Bool)? {
        switch choices.action {
        case 0...4: return await changeRecord(choices, on: alice, reference: &reference)
        case 5...8: return try await changeShare(choices, on: alice, list: list, share: &share, reference: &reference)
        default: return try await bobWrites(choices, reference: &reference)
        }
    }

    /// Alice adds, edits, moves or deletes a record of her list.
    private func changeRecord(
        _ choices: Choices, on alice: any ShareAcceptingDatabase, reference: inout SharingReference
    ) async -> (expected: Bool, succeeded: Bool)? {
        let (item, parent, step) = (choices.item, choices.parent, choices.step)
        switch choices.action {
        case 0, 1:
            let name = choices.newName
            var record = CloudRecord(
                recordType: "Item", id: CloudRecord.ID(recordName: name, zoneID: Self.zone),
                fields: ["name": .string(name)])
            record.parentID = parent == "none" ? nil : CloudRecord.ID(recordName: parent, zoneID: Self.zone)
            let succeeded = await Self.succeeds { _ = try await alice.save(record) }
            if succeeded {
                reference.items[name] = .init(type: "Item", name: name, parent: parent == "none" ? nil : parent)
            }
            // A record can't be its own parent (a `later-N` drawn as both name and parent).
            return (parent != name, succeeded)
        case 2:
            let succeeded = await Self.succeeds {
                try await Self.change(item, in: alice) { $0.fields["name"] = .string("edited \(step)") }
            }
            let expected = reference.items[item] != nil
            if succeeded { reference.items[item]?.name = "edited \(step)" }
            return (expected, succeeded)
        case 3:
            let newParent = parent == "none" || parent == item ? nil : parent
            let succeeded = await Self.succeeds {
                try await Self.change(item, in: alice) {
                    $0.parentID = newParent.map { CloudRecord.ID(recordName: $0, zoneID: Self.zone) }
                }
            }
            let expected = reference.items[item] != nil
            if succeeded { reference.items[item]?.parent = newParent }
            return (expected, succeeded)
        default:
            guard item != "list" else { return nil }
            let succeeded = await Self.succeeds {
                try await alice.deleteRecord(withID: CloudRecord.ID(recordName: item, zoneID: Self.zone))
            }
            if succeeded { reference.items[item] = nil }
            return (true, succeeded)
        }
    }

    /// Alice invites someone (who accepts), removes someone, or deletes the share.
    private func changeShare(
        _ choices: Choices, on alice: any ShareAcceptingDatabase, list: CloudRecord, share: inout CloudShare,
        reference: inout SharingReference
    ) async throws -> (expected: Bool, succeeded: Bool) {
        let (viewer, permission, current) = (choices.viewer, choices.permission, share)
        switch choices.action {
        case 5, 6:
            let shared = reference.share != nil
            let succeeded = await Self.succeeds {
                try await Self.invite(viewer, with: permission, to: current, shared: shared, on: server)
            }
            if succeeded {
                var participants = reference.share ?? [:]
                participants[viewer] = .init(permission: permission, accepted: true)
                reference.share = participants
            }
            return (true, succeeded)
        case 7:
            // Removing someone reads the share first: there must be one.
            let expected = reference.share != nil
            let succeeded = await Self.succeeds { try await Self.remove(viewer, from: current, on: server) }
            if succeeded { reference.share?[viewer] = nil }
            return (expected, succeeded)
        default:
            let expected = reference.share != nil
            let succeeded = await Self.succeeds { try await alice.deleteRecord(withID: current.id) }
            if succeeded {
                reference.share = nil
                share = try CloudShare(rootRecord: list)
            }
            return (expected, succeeded)
        }
    }

    /// Bob adds a record under one of alice's, where the share may or may not let him.
    private func bobWrites(_ choices: Choices, reference: inout SharingReference) async throws
        -> (expected: Bool, succeeded: Bool)
    {
        let bob = try server.sharedDatabase("_bob")
        let name = "bobs-\(choices.step)"
        var record = CloudRecord(
            recordType: "Item", id: CloudRecord.ID(recordName: name, zoneID: Self.sharedZone),
            fields: ["name": .string("bob's")])
        record.parentID = CloudRecord.ID(recordName: choices.item, zoneID: Self.sharedZone)
        let expected = reference.bobMayAdd(under: choices.item)
        let succeeded = await Self.succeeds { _ = try await bob.save(record) }
        if succeeded { reference.items[name] = .init(type: "Item", name: "bob's", parent: choices.item) }
        return (expected, succeeded)
    }

    /// What a user's shared database shows: each record but the share, by zone and name, with its type, name field
    /// and parent.
    static func view(of user: String, on server: SharingServerUsers) async throws -> [String: String] {
        let database = try server.sharedDatabase(user)
        var view: [String: String] = [:]
        for zone in try await database.allRecordZones() {
            let changes = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
            for record in changes.modifications where record.recordType != CloudShare.recordType {
                var name: String?
                if case .string(let text)? = record.fields["name"] { name = text }
                view["\(zone.zoneName)/\(zone.ownerName)/\(record.id.recordName)"] = describe(
                    record.recordType, name, record.parentID?.recordName)
            }
        }
        return view
    }

    static func succeeds(_ body: () async throws -> Void) async -> Bool {
        do {
            try await body()
            return true
        } catch {
            return false
        }
    }

    static func change(_ name: String, in database: any CloudDatabase, _ body: (inout CloudRecord) -> Void)
        async throws
    {
        var record = try await database.record(for: CloudRecord.ID(recordName: name, zoneID: zone))
        body(&record)
        _ = try await database.save(record)
    }

    static func invite(
        _ viewer: String, with permission: CloudShare.Permission, to share: CloudShare, shared: Bool,
        on server: SharingServerUsers
    ) async throws {
        let alice = try server.privateDatabase("_alice")
        var current = shared ? try CloudShare(record: try await alice.record(for: share.id)) : share
        if let existing = current.participants.first(where: { $0.userRecordName == viewer }) {
            _ = current.removeParticipant(existing)
        }
        try current.addParticipant(.init(userRecordName: viewer, permission: permission))
        let records =
            shared ? [current.record] : [try await alice.record(for: try #require(share.rootRecordID)), current.record]
        let results = try await alice.modifyRecords(
            saving: records, deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        let saved = try CloudShare(record: try #require(results.saveResults[share.id]).get())
        _ = try await server.sharedDatabase(viewer).acceptShare(shortGUID: try #require(saved.shortGUID))
    }

    static func remove(_ viewer: String, from share: CloudShare, on server: SharingServerUsers) async throws {
        let alice = try server.privateDatabase("_alice")
        var current = try CloudShare(record: try await alice.record(for: share.id))
        guard let participant = current.participants.first(where: { $0.userRecordName == viewer }) else { return }
        _ = current.removeParticipant(participant)
        _ = try await alice.save(current.record)
    }
}
