import Foundation
import NestedCloudKitCodable
import NestedCloudKitServer
import NestedCloudKitSync

/// The in-memory server and the clock its devices share, with the server's test controls (faults, lost responses,
/// limits) for the scenarios that need them.
struct Scenario: DeviceScenario {
    let clock = VirtualCloudClock()
    let server: InMemoryCloudDatabase

    init(maximumItemsPerRequest: Int = 400) {
        server = InMemoryCloudDatabase(maximumItemsPerRequest: maximumItemsPerRequest, clock: clock)
    }

    func device(_ configuration: SyncConfiguration) async throws -> Device {
        try await Device(server: server, clock: clock, configuration: configuration)
    }

    static func configuration(
        _ policy: ConflictPolicy = .fieldByField, deletes: DeleteConflictPolicy = .editWins,
        account: AccountChangePolicy = .resetLocalStore
    ) -> SyncConfiguration {
        SyncConfiguration(
            conflictPolicy: policy, deleteConflictPolicy: deletes, accountChangePolicy: account,
            retry: SyncRetryPolicy(jitter: 0))
    }

    /// The server's records of the synced zone, by name, without the engine's fields.
    func client() async throws -> any CloudDatabase { server }

    func serverNotes() async -> [String: Note] {
        Self.notes(in: await server.allRecords)
    }

    func loseNextUploadAnswer() async {
        server.network.loseNextResponse(to: .modify)
    }

    func deleteZone(reason: CloudZoneDeletion.Reason) async {
        await server.deleteZone(zoneID, reason: reason)
    }

    func serverRecords(ofTypes types: [String]) async -> [CloudRecord] {
        await server.allRecords.filter { types.contains($0.recordType) && $0.id.zoneID == zoneID }
    }
}
