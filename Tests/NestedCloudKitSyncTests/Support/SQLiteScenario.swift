import Foundation
import NestedCloudKitCodable
import NestedCloudKitSQLite
import NestedCloudKitServer
import NestedCloudKitSync
import TestSupport

/// Devices of one user syncing with a SQLite file as their server: the persistent backend, for the scenarios whose
/// outcome depends on what the server stores (``ScenarioServer/sqlite``). It has no fault controls: the scenarios
/// that lose answers run on the other servers.
struct SQLiteScenario: DeviceScenario {
    let clock = VirtualCloudClock()
    let server: SQLiteCloudDatabase

    init() throws {
        server = try SQLiteCloudDatabase(path: temporaryDatabasePath("scenario"), clock: clock)
    }

    func device(_ configuration: SyncConfiguration) async throws -> Device {
        try await Device(server: server, clock: clock, configuration: configuration)
    }

    func client() async throws -> any CloudDatabase { server }

    func serverNotes() async throws -> [String: Note] {
        Self.notes(in: try await serverRecords(ofTypes: ["Note"]))
    }

    func serverRecords(ofTypes types: [String]) async throws -> [CloudRecord] {
        var records: [CloudRecord] = []
        for type in types {
            var page: CloudQueryPage
            do {
                page = try await server.records(
                    matching: CloudQuery(recordType: type), inZoneWith: zoneID, desiredKeys: nil, resultsLimit: 400)
            } catch let error as CloudDatabaseError where error.code == .zoneNotFound {
                return []
            }
            while true {
                records += try page.matchResults.map { try $0.1.get() }
                guard let cursor = page.queryCursor else { break }
                page = try await server.records(continuingMatchFrom: cursor, desiredKeys: nil, resultsLimit: 400)
            }
        }
        return records.sorted { $0.id.recordName < $1.id.recordName }
    }

    func deleteZone(reason: CloudZoneDeletion.Reason) async throws {
        throw CloudDatabaseError.invalidArguments("the SQLite scenario has no zone deletions by reason")
    }

    func loseNextUploadAnswer() async throws {
        throw CloudDatabaseError.invalidArguments("the SQLite scenario loses no answers")
    }
}
