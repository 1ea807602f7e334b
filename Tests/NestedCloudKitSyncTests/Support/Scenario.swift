import Foundation
import NestedCloudKitCodable
import NestedCloudKitSync

/// A server and the clock its devices share.
struct Scenario {
    let clock = VirtualSyncClock()
    let server: InMemoryCloudDatabase

    init(maximumItemsPerRequest: Int = 400) {
        let clock = self.clock
        server = InMemoryCloudDatabase(maximumItemsPerRequest: maximumItemsPerRequest, clock: { clock.now() })
    }

    func device(_ configuration: SyncConfiguration = SyncConfiguration(retry: SyncRetryPolicy(jitter: 0)))
        async throws -> Device
    {
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

    /// The zone every device syncs by default.
    var zoneID: CloudRecord.ZoneID { SyncStore.defaultZoneID }

    func recordID(_ name: String) -> CloudRecord.ID { CloudRecord.ID(recordName: name, zoneID: zoneID) }

    /// The server's records of the synced zone, by name, without the engine's fields.
    func serverNotes() async -> [String: Note] {
        var notes: [String: Note] = [:]
        for record in await server.allRecords where record.recordType == "Note" {
            if let note = try? CKRecordDecoder().decode(Note.self, from: record) { notes[note.id] = note }
        }
        return notes
    }
}
