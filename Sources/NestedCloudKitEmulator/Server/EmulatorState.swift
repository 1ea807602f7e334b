import Foundation
import NIOConcurrencyHelpers
import NestedCloudKitCodable

/// Everything the emulator's handlers share: the databases, sessions, uploads, notifications, schemas, faults
/// and the request log.
final class EmulatorState: Sendable {
    let configuration: EmulatorConfiguration
    let clock: EmulatorClock
    let registry: DatabaseRegistry
    let tokens: WebAuthTokens
    let users = UserDirectory()
    let uploads: UploadStore
    let notifications: NotificationHub
    let schema: SchemaRegistry
    let faults = FaultInjector()
    let log = RequestLog()
    let verifier: ServerToServerVerifier
    let downloads: DownloadTokens
    let started = Date()
    private let port = NIOLockedValueBox<Int?>(nil)

    /// The port the server listens on, once it does; `nil` before.
    var boundPort: Int? {
        get { port.withLockedValue { $0 } }
        set { port.withLockedValue { $0 = newValue } }
    }

    init(configuration: EmulatorConfiguration, clock: EmulatorClock = EmulatorClock()) {
        self.configuration = configuration
        self.clock = clock
        registry = DatabaseRegistry(storage: configuration.storage, clock: clock)
        tokens = WebAuthTokens(clock: clock, policy: configuration.webAuthTokens)
        uploads = UploadStore(clock: clock)
        notifications = NotificationHub(pollTimeout: configuration.notificationPollTimeout)
        schema = SchemaRegistry(
            storage: configuration.storage, initial: configuration.schema, environment: configuration.environment)
        verifier = ServerToServerVerifier(keys: configuration.serverKeys)
        downloads = DownloadTokens(clock: clock)
    }

    /// The names and origins requests are checked against, for the port the server listens on.
    var origins: RequestOrigins {
        RequestOrigins(configuration: configuration, port: boundPort ?? configuration.port)
    }

    /// Forgets everything: every database, token, discoverable user, notification URL, schema, upload, fault and
    /// logged request, and the clock's offset.
    func reset() async throws(ServerError) {
        try await registry.reset()
        await tokens.reset()
        users.reset()
        await notifications.reset()
        await schema.reset()
        uploads.reset()
        faults.remove()
        log.clear()
        clock.setOffset(0)
    }

    /// 421 with the sign-in page to send the user to.
    func authenticationRequired(_ request: EmulatorRequest, reason: String) -> ServerError {
        ServerError(
            .authenticationRequired, reason + ": sign in at the redirectURL, or POST /emulator/v1/sign-in",
            redirectURL: request.baseURL + "/emulator/sign-in")
    }

    /// The page size the emulator reads its own databases with (a query's candidates, the admin API's records):
    /// large, as no client waits on each page.
    static let internalReadPage = 1000

    /// The record name the wire gives a database's owner: the user's, or CloudKit's default owner for the public
    /// database.
    static func ownerRecordName(of key: DatabaseKey) -> String {
        key.user.map(Caller.userRecordName(for:)) ?? "_defaultOwner"
    }

    /// Fires the database subscriptions of every open database another user's request just changed (shares let
    /// one user's write change another's databases), and marks them written for the dashboard.
    func notifyDatabasesChangedByOthers(after handle: DatabaseHandle) async {
        let changed = await registry.handlesChangedByOthers(
            container: handle.key.container, environment: handle.key.environment)
        for other in changed {
            other.noteWrite()
            await notifications.zonesChanged(in: other)
        }
    }

    /// The wire coding for one database, reached at `baseURL`.
    func coding(for handle: DatabaseHandle, baseURL: String) -> WireCoding {
        let key = handle.key
        let uploads = self.uploads
        let downloads = self.downloads
        var coding = WireCoding(
            ownerRecordName: Self.ownerRecordName(of: key),
            databaseUserRecordName: handle.databaseUserRecordName,
            downloadURL: { id, field, index in
                let owner = id.zoneID.ownerName
                let location = AssetsEndpoint.Location(
                    key: key, zoneName: id.zoneID.zoneName,
                    zoneOwner: owner == CloudRecord.ZoneID.currentUserOwnerName ? nil : owner,
                    recordName: id.recordName, field: field, index: index)
                return baseURL + AssetsEndpoint.downloadPrefix + downloads.token(for: location) + "/${f}"
            },
            uploadedAsset: { uploads.data(receipt: $0) }
        )
        coding.keepsOtherOwners = key.scope == .shared
        coding.shareURL = { baseURL + SharePage.prefix + $0 }
        return coding
    }
}
