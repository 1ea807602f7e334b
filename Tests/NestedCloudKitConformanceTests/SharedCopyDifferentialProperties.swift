import BackendTestSupport
import Foundation
import NestedCloudKitCodable
import PropertyBased
import Testing

/// The SQLite server keeps each participant's copy up to date by what a write touched, and refreshes a zone whole
/// only when a write may change who sees other records. The simulated server recomputes every copy whole after
/// every write. Random runs of the same requests against both must leave bob and carol seeing exactly the same:
/// items added under random parents (the list, another item, one that doesn't exist yet), edited, moved and
/// deleted; the list shared, participants added and removed, the share deleted; bob writing where he may and
/// where he may not. A failure reports the seed that replays it.
@Suite("Sharing conformance: the SQLite server's copies against the simulated server's")
struct SharedCopyDifferentialProperties {
    @Test func bobAndCarolSeeTheSameOnBothServers() async {
        await propertyCheck(count: 12, input: Gen.uint64()) { seed in
            try await DifferentialRun(seed: seed).run()
        }
    }
}

private struct DifferentialRun {
    static let zone = CloudRecord.ZoneID(zoneName: "Lists")
    let seed: UInt64
    let servers: [SharingServerUsers]

    init(seed: UInt64) throws {
        self.seed = seed
        servers = try [SharingServerBackend.inMemory, .sqlite].map { try $0.make(SystemCloudClock()) }
    }

    func run() async throws {
        var random = Xoshiro(seed: (seed, seed &* 0x9E37_79B9_7F4A_7C15 | 1, ~seed, seed ^ 0xDEAD_BEEF))
        let list = CloudRecord(recordType: "List", id: CloudRecord.ID(recordName: "list", zoneID: Self.zone))
        var share = try CloudShare(rootRecord: list)
        for server in servers {
            let alice = try server.privateDatabase("_alice")
            _ = try await alice.modifyRecordZones(saving: [Self.zone], deleting: [])
            _ = try await alice.save(list)
        }
        var names = ["list"]
        var shared = false
        for step in 0..<40 {
            let action = Int.random(in: 0..<10, using: &random)
            let item = names.randomElement(using: &random) ?? "list"
            let parent =
                (names + ["later-\(Int.random(in: 0..<3, using: &random))", "none"])
                .randomElement(using: &random) ?? "none"
            // Every choice is made before the requests, so that both servers get the same ones.
            let viewer = Bool.random(using: &random) ? "_bob" : "_carol"
            let permission: CloudShare.Permission = Bool.random(using: &random) ? .readWrite : .readOnly
            var outcomes: [String] = []
            for server in servers {
                let alice = try server.privateDatabase("_alice")
                switch action {
                case 0, 1:
                    let name = "item-\(step)"
                    var record = CloudRecord(
                        recordType: "Item", id: CloudRecord.ID(recordName: name, zoneID: Self.zone),
                        fields: ["name": .string(name)])
                    record.parentID = parent == "none" ? nil : CloudRecord.ID(recordName: parent, zoneID: Self.zone)
                    outcomes.append(await Self.outcome { _ = try await alice.save(record) })
                case 2:
                    outcomes.append(
                        await Self.outcome {
                            try await Self.change(item, in: alice) { $0.fields["name"] = .string("edited \(step)") }
                        })
                case 3:
                    outcomes.append(
                        await Self.outcome {
                            try await Self.change(item, in: alice) {
                                $0.parentID =
                                    parent == "none" || parent == item
                                    ? nil : CloudRecord.ID(recordName: parent, zoneID: Self.zone)
                            }
                        })
                case 4:
                    guard item != "list" else { continue }
                    outcomes.append(
                        await Self.outcome {
                            try await alice.deleteRecord(withID: CloudRecord.ID(recordName: item, zoneID: Self.zone))
                        })
                case 5, 6:
                    outcomes.append(
                        await Self.outcome {
                            try await Self.invite(viewer, with: permission, to: share, shared: shared, on: server)
                        })
                case 7:
                    outcomes.append(await Self.outcome { try await Self.remove(viewer, from: share, on: server) })
                case 8:
                    outcomes.append(await Self.outcome { try await alice.deleteRecord(withID: share.id) })
                default:
                    // Bob writes where the share may or may not let him.
                    let bob = try server.sharedDatabase("_bob")
                    let owned = CloudRecord.ZoneID(zoneName: Self.zone.zoneName, ownerName: "_alice")
                    var record = CloudRecord(
                        recordType: "Item", id: CloudRecord.ID(recordName: "bobs-\(step)", zoneID: owned),
                        fields: ["name": .string("bob's")])
                    record.parentID = CloudRecord.ID(recordName: item, zoneID: owned)
                    outcomes.append(await Self.outcome { _ = try await bob.save(record) })
                }
            }
            // Keep the names and the share in step with what the first server did (both must agree anyway).
            if action <= 1, outcomes.first == "ok" { names.append("item-\(step)") }
            if action == 9, outcomes.first == "ok" { names.append("bobs-\(step)") }
            if action == 4, outcomes.first == "ok" { names.removeAll { $0 == item } }
            if action == 5 || action == 6, outcomes.first == "ok" { shared = true }
            if action == 8, outcomes.first == "ok" {
                shared = false
                share = try CloudShare(rootRecord: list)
            }
            #expect(Set(outcomes).count <= 1, "seed \(seed), step \(step): the servers answered \(outcomes)")
            for viewer in ["_bob", "_carol"] {
                let views = try await servers.asyncMap { try await Self.view(of: viewer, on: $0) }
                #expect(
                    views[0] == views[1],
                    "seed \(seed), step \(step) (action \(action)): \(viewer) sees \(views[0]) on the simulated server, \(views[1]) on SQLite"
                )
            }
        }
    }

    /// What a user's shared database shows: each record by zone and name, with its type, name field and parent.
    static func view(of user: String, on server: SharingServerUsers) async throws -> [String: String] {
        let database = try server.sharedDatabase(user)
        var view: [String: String] = [:]
        for zone in try await database.allRecordZones() {
            let changes = try await database.recordZoneChanges(inZoneWith: zone, since: nil)
            for record in changes.modifications where record.recordType != CloudShare.recordType {
                view["\(zone.zoneName)/\(zone.ownerName)/\(record.id.recordName)"] =
                    "\(record.recordType) \(record.fields["name"].map { "\($0)" } ?? "-") under \(record.parentID?.recordName ?? "-")"
            }
        }
        return view
    }

    static func outcome(_ body: () async throws -> Void) async -> String {
        do {
            try await body()
            return "ok"
        } catch let error as CloudDatabaseError {
            switch error {
            case .unknownItem: return "unknownItem"
            case .permissionFailure: return "permissionFailure"
            case .serverRecordChanged: return "serverRecordChanged"
            case .invalidArguments: return "invalidArguments"
            default: return "\(error)"
            }
        } catch {
            return "\(error)"
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

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
