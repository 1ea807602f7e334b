import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import PropertyBased
import Testing

@testable import NestedCloudKitSync

/// Random edits, deletes, offline periods, restarts and server faults on three devices, in random interleavings:
/// after everyone syncs, every device holds exactly the server's records. A failure reports the seed that
/// replays it.
@Suite("Sync convergence properties")
struct ConvergenceProperties {
    static let seeds = Gen.uint64()

    @Test func devicesConvergeUnderEveryPolicy() async {
        await propertyCheck(count: 8, input: Self.seeds) { seed in
            for policy in ["fieldByField", "serverWins", "newestEditWins"] {
                var simulation = Simulation(seed: seed, policy: policy)
                try await simulation.run()
            }
        }
    }

    @Test func underClientWinsEveryAcknowledgedWriteReachesTheServer() async {
        await propertyCheck(count: 12, input: Self.seeds) { seed in
            var simulation = Simulation(seed: seed, policy: "clientWins")
            try await simulation.run()
        }
    }
}

/// One random run.
private struct Simulation {
    let seed: UInt64
    let policy: String
    var random: SplitMix64

    init(seed: UInt64, policy: String) {
        self.seed = seed
        self.policy = policy
        random = SplitMix64(seed: seed)
    }

    var conflictPolicy: ConflictPolicy {
        switch policy {
        case "serverWins": .serverWins
        case "clientWins": .clientWins
        case "newestEditWins": .newestEditWins
        default: .fieldByField
        }
    }

    mutating func run() async throws {
        let scenario = Scenario()
        let server = AcceptedSaves(base: scenario.server)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("convergence-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = SyncConfiguration(
            conflictPolicy: conflictPolicy, retry: SyncRetryPolicy(maximumAttempts: 6, jitter: 0))
        let paths = (0..<3).map { directory.appendingPathComponent("device\($0).sqlite").path }
        var devices: [Device] = []
        for path in paths {
            devices.append(
                try await Device(server: server, clock: scenario.clock, path: path, configuration: configuration))
        }
        // Per device and record: the last value the device wrote to each field and not yet covered by a successful
        // sync.
        var unsent: [[String: [String: String]]] = Array(repeating: [:], count: 3)
        for step in 0..<30 {
            let index = Int(random.next() % 3)
            let device = devices[index]
            let name = "n\(random.next() % 5)"
            scenario.clock.advance(by: .milliseconds(Int64(random.next() % 2_000)))
            switch random.next() % 10 {
            case 0...3:
                var note = try await device.note(name) ?? Note(id: name, title: "", body: "")
                let field: String
                switch random.next() % 3 {
                case 0:
                    note.title = "t\(step)d\(index)"
                    field = "title"
                case 1:
                    note.body = "b\(step)d\(index)"
                    field = "body"
                default:
                    note.pinned.toggle()
                    field = "pinned"
                }
                try await device.store.save(note)
                unsent[index][name, default: [:]][field] = Self.value(of: field, in: note)
            case 4:
                try await device.store.deleteRecords(withIDs: [scenario.recordID(name)])
                unsent[index][name] = nil
            case 5:
                // A restart: the store is opened again from its file, with a new engine.
                devices[index] = try await Device(
                    server: server, clock: scenario.clock, path: paths[index], configuration: configuration)
            case 6:
                switch random.next() % 4 {
                case 0: scenario.server.network.loseNextResponse()
                case 1: scenario.server.network.throttleNextRequest(retryAfter: 3)
                case 2: scenario.server.network.failNextRequest(with: .networkFailure("offline"))
                default: scenario.server.network.failNextRequest(with: .serviceUnavailable(retryAfter: nil))
                }
                try await sync(device, index: index, unsent: &unsent, server: server)
            default:
                try await sync(device, index: index, unsent: &unsent, server: server)
            }
        }
        // Everyone syncs, twice round, with no faults.
        for _ in 0..<2 {
            for index in devices.indices {
                try await sync(devices[index], index: index, unsent: &unsent, server: server)
            }
        }
        let expected = await scenario.serverNotes()
        for (index, device) in devices.enumerated() {
            let local = try await device.store.fetchAll(Note.self)
            #expect(
                Dictionary(uniqueKeysWithValues: local.map { ($0.id, $0) }) == expected,
                "device \(index) under \(policy), seed \(seed)")
            #expect(try await device.store.pendingChanges().isEmpty, "device \(index) under \(policy), seed \(seed)")
        }
    }

    static func value(of field: String, in note: Note) -> String {
        switch field {
        case "title": note.title
        case "body": note.body
        default: String(note.pinned)
        }
    }

    /// Syncs a device; after a sync that succeeded, under client wins, every value it had written must have been
    /// accepted by the server: the client's changes win, field by field (the fields it didn't change are the
    /// server's).
    private func sync(_ device: Device, index: Int, unsent: inout [[String: [String: String]]], server: AcceptedSaves)
        async throws
    {
        do {
            try await device.sync()
        } catch is SyncError {
            return  // A fault outlasted the retries: the changes stay queued for the next sync.
        }
        if policy == "clientWins" {
            let accepted = await server.accepted
            for (name, fields) in unsent[index] {
                for (field, value) in fields {
                    #expect(
                        accepted.contains { $0.id == name && Self.value(of: field, in: $0) == value },
                        "the write of \(field) = \(value) to \(name) lost under client wins, seed \(seed)")
                }
            }
        }
        unsent[index] = [:]
    }
}

/// The in-memory server, recording every note it accepted.
private actor AcceptedSaves: ForwardingCloudDatabase {
    let base: InMemoryCloudDatabase
    private(set) var accepted: Set<Note> = []

    init(base: InMemoryCloudDatabase) { self.base = base }

    func modifyRecords(
        saving recordsToSave: [CloudRecord], deleting recordIDsToDelete: [CloudRecord.ID],
        savePolicy: CloudRecordSavePolicy, atomically: Bool
    ) async throws -> CloudModifyResults {
        let results = try await base.modifyRecords(
            saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically)
        for case .success(let record) in results.saveResults.values {
            if let note = try? CKRecordDecoder().decode(Note.self, from: record) { accepted.insert(note) }
        }
        return results
    }
}
