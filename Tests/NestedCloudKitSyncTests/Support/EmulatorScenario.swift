import Foundation
import NestedCloudKitCodable
import NestedCloudKitEmulator
import NestedCloudKitServer
import NestedCloudKitSync
import NestedCloudKitWebServices

/// Devices of one user syncing through CloudKit Web Services with the emulator (in this process, over loopback
/// HTTP): what a Linux or server app does against CloudKit, with the emulator's clock the devices' clock.
struct EmulatorScenario: DeviceScenario {
    let clock: VirtualCloudClock
    let emulator: CloudKitEmulator
    static let user = "alice"
    static let container = "iCloud.com.example.SyncScenarios"

    /// An emulator in development, or in production on a schema.
    static func start(schema: CloudSchema? = nil) async throws -> EmulatorScenario {
        let clock = VirtualCloudClock()
        let emulator = try await CloudKitEmulator.start(
            EmulatorConfiguration(schema: schema, clock: clock, webAuthTokens: .singleUse))
        return EmulatorScenario(clock: clock, emulator: emulator)
    }

    /// A new client of the user's private database, with a web auth token of its own: the scenarios keep tokens
    /// single-use, as Apple's reference says, so that every device's client is seen to send the newest.
    func database() async throws -> CloudKitWebServicesDatabase {
        try CloudKitWebServicesDatabase(
            configuration: CloudKitWebServicesConfiguration(
                containerIdentifier: Self.container,
                environment: emulator.configuration.environment == .production ? .production : .development,
                database: .private,
                authentication: .apiToken("api-token", webAuthToken: await emulator.signIn(user: Self.user)),
                serverURL: emulator.url, retryPolicy: .never, requestTimeout: .seconds(120)))
    }

    func device(_ configuration: SyncConfiguration) async throws -> Device {
        try await Device(server: try await database(), clock: clock, configuration: configuration)
    }

    func client() async throws -> any CloudDatabase { try await database() }

    func serverNotes() async throws -> [String: Note] {
        Self.notes(in: try await serverRecords(ofTypes: ["Note"]))
    }

    func loseNextUploadAnswer() async throws {
        _ = try emulator.inject(EmulatorFault(path: "records/modify", loseResponse: true))
    }

    func deleteZone(reason: CloudZoneDeletion.Reason) async throws {
        try await emulator.deleteZone(
            named: zoneID.zoneName, ofUser: Self.user, container: Self.container, reason: reason)
    }

    func serverRecords(ofTypes types: [String]) async throws -> [CloudRecord] {
        let reader = try await database()
        var records: [CloudRecord] = []
        for type in types {
            var page: CloudQueryPage
            do {
                page = try await reader.records(
                    matching: CloudQuery(recordType: type), inZoneWith: zoneID, desiredKeys: nil, resultsLimit: 200)
            } catch let error as CloudDatabaseError where error.code == .zoneNotFound {
                return []
            }
            while true {
                records += try page.matchResults.map { try $0.1.get() }
                guard let cursor = page.queryCursor else { break }
                page = try await reader.records(continuingMatchFrom: cursor, desiredKeys: nil, resultsLimit: 200)
            }
        }
        return records.sorted { $0.id.recordName < $1.id.recordName }
    }
}
