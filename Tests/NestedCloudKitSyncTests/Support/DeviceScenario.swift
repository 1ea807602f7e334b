import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import NestedCloudKitSync
import Testing

/// What a scenario's devices need from the server they share, whichever server it is: the scenarios that only sync
/// devices run against each (``ScenarioServer``).
protocol DeviceScenario: Sendable {
    /// The clock the devices (and the server, when it takes one) share.
    var clock: VirtualCloudClock { get }
    /// A new device on the server.
    func device(_ configuration: SyncConfiguration) async throws -> Device
    /// A new client of the server, signed in as the scenario's user: for a device behind a wrapper.
    func client() async throws -> any CloudDatabase
    /// The server's records of the synced zone, by name, without the engine's fields.
    func serverNotes() async throws -> [String: Note]
    /// The server's records of some types in the synced zone, sorted by name.
    func serverRecords(ofTypes types: [String]) async throws -> [CloudRecord]
    /// Deletes the synced zone on the server as the user, another device or CloudKit would.
    func deleteZone(reason: CloudZoneDeletion.Reason) async throws
    /// Makes the server apply the next upload and lose its answer: the device can't know it took effect.
    func loseNextUploadAnswer() async throws
}

extension DeviceScenario {
    func device() async throws -> Device {
        try await device(SyncConfiguration(retry: SyncRetryPolicy(jitter: 0)))
    }

    /// A new device whose client fails and hides records as a test says (``FlakyDatabase``).
    func flakyDevice(
        maximumItemsPerRequest: Int? = nil,
        _ configuration: SyncConfiguration = SyncConfiguration(retry: SyncRetryPolicy(jitter: 0))
    ) async throws -> (Device, any RecordFaults) {
        func wrap(_ base: some CloudDatabase) -> any RecordFaults {
            FlakyDatabase(base, maximumItemsPerRequest: maximumItemsPerRequest)
        }
        let flaky = wrap(try await client())
        return (try await Device(server: flaky, clock: clock, configuration: configuration), flaky)
    }

    /// The zone every device syncs by default.
    var zoneID: CloudRecord.ZoneID { SyncStore.defaultZoneID }

    func recordID(_ name: String) -> CloudRecord.ID { CloudRecord.ID(recordName: name, zoneID: zoneID) }

    /// The notes among `records`, by name.
    static func notes(in records: some Sequence<CloudRecord>) -> [String: Note] {
        var notes: [String: Note] = [:]
        for record in records where record.recordType == "Note" {
            if let note = try? CKRecordDecoder().decode(Note.self, from: record) { notes[note.id] = note }
        }
        return notes
    }
}

/// The servers the device scenarios run against.
enum ScenarioServer: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `InMemoryCloudDatabase`, called directly.
    case inMemory
    /// The emulator over HTTP, each device with its own `CloudKitWebServicesDatabase` signed in as one user.
    case emulator
    /// A `SQLiteCloudDatabase` file, called directly; without fault controls, so only in ``storing``.
    case sqlite

    /// The servers every device scenario runs against: those with fault controls.
    static var allCases: [ScenarioServer] { [.inMemory, .emulator] }
    /// Every server that stores records, for the scenarios whose outcome is what the server keeps.
    static let storing: [ScenarioServer] = [.inMemory, .sqlite, .emulator]

    var testDescription: String {
        switch self {
        case .inMemory: "in-memory server"
        case .emulator: "emulator over HTTP"
        case .sqlite: "SQLite server"
        }
    }

    func scenario() async throws -> any DeviceScenario {
        switch self {
        case .inMemory: Scenario()
        case .emulator: try await EmulatorScenario.start()
        case .sqlite: try SQLiteScenario()
        }
    }
}
